#!/usr/bin/env node
// `flotilla-backup backup|restore --dir DIR [--server URL] [--user U --password P]`: a whole account's
// streams, KV buckets and object stores to and from a directory (scripts/backup/account-backup.js).
import { connect } from 'nats';
import { backupAccount, restoreAccount } from '../scripts/backup/account-backup.js';

const USAGE = 'usage: flotilla-backup backup|restore --dir DIR [--server nats://127.0.0.1:4222] [--user U --password P]';

function parse(argv) {
  const o = { command: argv[0], server: 'nats://127.0.0.1:4222' };
  for (let i = 1; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--dir') o.dir = v;
    else if (argv[i] === '--server' || argv[i] === '-s') o.server = v;
    else if (argv[i] === '--user') o.user = v;
    else if (argv[i] === '--password') o.pass = v;
    else throw new Error(`unknown option ${argv[i]}`);
    if (v === undefined) throw new Error(`${argv[i]} needs a value`);
    i++;
  }
  if (o.command !== 'backup' && o.command !== 'restore') throw new Error('backup or restore?');
  if (o.dir === undefined) throw new Error('--dir is required');
  return o;
}

let o;
try {
  o = parse(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`flotilla-backup: ${err.message}\n${USAGE}\n`);
  process.exit(2);
}
const nc = await connect({ servers: o.server, ...(o.user !== undefined ? { user: o.user, pass: o.pass } : {}) });
try {
  const results = o.command === 'backup' ? await backupAccount(nc, o.dir, process.stdout) : await restoreAccount(nc, o.dir, process.stdout);
  const messages = results.reduce((n, r) => n + r.messages, 0);
  process.stdout.write(`${o.command === 'backup' ? 'backed up' : 'restored'} ${results.length} stream(s), ${messages} message(s) ${o.command === 'backup' ? 'to' : 'from'} ${o.dir}\n`);
} catch (err) {
  process.stderr.write(`flotilla-backup: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  await nc.close();
}
