#!/usr/bin/env -S node --single-threaded-gc
// The `flotilla` binary: a thin launcher for the built server package (`npm install` builds it). The
// shebang carries bin/node-flags.js's flags (a shebang cannot import them).
// First, before any module loads: with a SIGUSR1 listener Node does not open its inspector (a debugger on
// 127.0.0.1:9229) on that signal, and SIGHUP does not kill the process; main() installs the real handlers
// (packages/server/src/operator-signals.ts).
const untilMainHandles = () => undefined;
process.on('SIGUSR1', untilMainHandles);
process.on('SIGHUP', untilMainHandles);

const { main } = await import('../packages/server/dist/main.js');
const code = await main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
