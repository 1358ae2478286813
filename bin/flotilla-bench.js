#!/usr/bin/env node
// The `flotilla-bench` binary (`npm run bench -- …`): side-by-side workloads against Flotilla and
// nats-server (scripts/bench/bench-main.js); `raft` and `store` run the in-process benches of those packages.
// Needs the built packages (`npx tsc -b`; `npm run bench` builds first).
const [first, ...rest] = process.argv.slice(2);
if (first === 'raft' || first === 'store') {
  const mod = await import(`../scripts/bench/${first}.js`);
  await mod.main(rest);
} else {
  const { main } = await import('../scripts/bench/bench-main.js');
  process.exitCode = await main(process.argv.slice(2));
}
