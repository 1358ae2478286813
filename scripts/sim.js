#!/usr/bin/env node
// `npm run sim -- --seeds N [--nodes 5] [--steps K] [--start S] [--seed S] [--bug ackBeforePersist]`
// Runs seeded Raft simulations (packages/raft/src/sim) and ends with `sim: N seeds, V violations`.
import { simulate } from '@flotilla/raft';

function parseArgs(argv) {
  const args = { seeds: 100, start: 1, nodes: 3, steps: 300, bugs: {}, single: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    switch (flag) {
      case '--seeds': args.seeds = Number(value); i++; break;
      case '--start': args.start = Number(value); i++; break;
      case '--seed': args.single = Number(value); i++; break;
      case '--nodes': args.nodes = Number(value); i++; break;
      case '--steps': args.steps = Number(value); i++; break;
      case '--bug': args.bugs[value] = true; i++; break;
      default:
        console.error(`unknown argument ${flag}`);
        process.exit(2);
    }
  }
  for (const key of ['seeds', 'start', 'nodes', 'steps']) {
    if (!Number.isInteger(args[key]) || args[key] < 1) {
      console.error(`--${key} must be a positive integer`);
      process.exit(2);
    }
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const first = args.single ?? args.start;
const count = args.single !== null ? 1 : args.seeds;
const started = performance.now();
let violations = 0;
let acknowledged = 0;
for (let seed = first; seed < first + count; seed++) {
  const result = simulate({ seed, nodes: args.nodes, steps: args.steps, bugs: args.bugs });
  acknowledged += result.acknowledged;
  if (result.violations.length > 0) {
    violations++;
    console.log(`seed ${seed}: ${result.violations.join('; ')}`);
    console.log(`  replay: ${result.replay}`);
  }
  if (count >= 10_000 && (seed - first + 1) % 10_000 === 0) {
    console.error(`  ${seed - first + 1} seeds, ${violations} violations, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `nodes ${args.nodes}, steps ${args.steps}, seeds ${first}..${first + count - 1}: ${acknowledged} acknowledged proposals, ${seconds.toFixed(1)} s`,
);
console.log(`sim: ${count} seeds, ${violations} violations`);
process.exitCode = violations > 0 ? 1 : 0;
