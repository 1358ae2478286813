#!/usr/bin/env -S node --single-threaded-gc
// The `flotilla` binary: a thin launcher for the built server package (`npm install` builds it). The
// shebang carries bin/node-flags.js's flags (a shebang cannot import them).
import { main } from '../packages/server/dist/main.js';

const code = await main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
