#!/usr/bin/env node
// The `flotilla` binary: a thin launcher for the built server package (`npm install` builds it).
import { main } from '../packages/server/dist/main.js';

const code = await main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
