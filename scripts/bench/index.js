#!/usr/bin/env node
// `npm run bench -- <name> [args]`: runs scripts/bench/<name>.js, whose `main(args)` prints its own table.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.js') && f !== 'index.js' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args]`);
  process.exit(2);
}
const mod = await import(`./${name}.js`);
await mod.main(args);
