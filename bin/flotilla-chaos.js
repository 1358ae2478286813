#!/usr/bin/env node
// The `flotilla-chaos` binary (`npm run chaos -- …`): a chaos run against a local or given cluster; prints a
// human summary (and JSON with --json), exits 1 on any violation with the seed to replay it.
import { parseOptions, usage } from '../scripts/chaos/cli-options.js';
import { runChaos, humanSummary, abortRuns } from '../scripts/chaos/run-chaos.js';

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err.message}\n\n${usage()}\n`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    process.stderr.write(`flotilla-chaos: ${signal}, stopping the cluster\n`);
    void abortRuns().finally(() => process.exit(2));
  });
}
try {
  const summary = await runChaos(options);
  // with --json - the JSON owns stdout
  (options.json === '-' ? process.stderr : process.stdout).write(`${humanSummary(summary)}\n`);
  process.exitCode = summary.violations.total > 0 ? 1 : 0;
} catch (err) {
  process.stderr.write(`flotilla-chaos: the run could not be completed: ${err.stack ?? err.message}\n`);
  process.exitCode = 2;
}
