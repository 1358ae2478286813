// `flotilla-backup backup|restore`: a whole account's JetStream — every stream, KV bucket (KV_*) and object
// store (OBJ_*) — saved to and restored from a directory through the JetStream API as the `nats` CLI drives it
// (STREAM.SNAPSHOT with per-chunk acks, consumers included; STREAM.RESTORE chunk by chunk), with a progress bar.
// Layout: <dir>/<stream>/backup.json (the snapshot answer: config and state) + <dir>/<stream>/stream.tar.s2.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInbox } from 'nats';

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Chunks sent per restore request and bytes per snapshot chunk (jsm.go's defaults are 128 KiB chunks). */
const CHUNK_BYTES = 128 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;
/** A snapshot with no chunk for this long is abandoned. */
const SNAPSHOT_IDLE_MS = 60_000;

export class Progress {
  constructor(out, total, label) {
    this.out = out;
    this.total = Math.max(1, total);
    this.label = label;
    this.done = 0;
    this.tty = out.isTTY === true;
    this.lastPct = -1;
  }

  add(n) {
    this.done += n;
    const pct = Math.min(100, Math.floor((this.done / this.total) * 100));
    if (pct === this.lastPct) return;
    this.lastPct = pct;
    // Without a terminal, one line per 25 %: a log, not a wall of carriage returns.
    if (!this.tty && pct % 25 !== 0) return;
    this.out.write(`${this.tty ? '\r' : ''}${this.bar(pct)}${this.tty ? '' : '\n'}`);
  }

  bar(pct) {
    const width = 30;
    const full = Math.round((pct / 100) * width);
    return `${this.label.padEnd(24)} [${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(pct).padStart(3)}% ${formatBytes(this.done)}`;
  }

  finish(note = '') {
    this.out.write(`${this.tty ? '\r' : ''}${this.bar(100)}${note}\n`);
  }
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

async function api(nc, subject, body) {
  const r = await nc.request(subject, enc.encode(body === undefined ? '' : JSON.stringify(body)), { timeout: REQUEST_TIMEOUT_MS });
  const answer = JSON.parse(dec.decode(r.data));
  if (answer.error) throw new Error(`${subject}: ${answer.error.description} (${answer.error.err_code})`);
  return answer;
}

/** Every stream of the account (STREAM.NAMES, paged). */
export async function streamNames(nc) {
  const names = [];
  for (let offset = 0; ; ) {
    const page = await api(nc, '$JS.API.STREAM.NAMES', { offset });
    const got = page.streams ?? [];
    names.push(...got);
    offset += got.length;
    if (got.length === 0 || offset >= page.total) return names.sort();
  }
}

/** One stream to <dir>/<stream>/. */
export async function backupStream(nc, stream, dir, out) {
  const target = join(dir, stream);
  mkdirSync(target, { recursive: true });
  const file = createWriteStream(join(target, 'stream.tar.s2'));
  const inbox = createInbox();
  let progress = null;
  let bytes = 0;
  let idle;
  const ended = new Promise((resolve, reject) => {
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => reject(new Error(`${stream}: no snapshot data for ${SNAPSHOT_IDLE_MS} ms`)), SNAPSHOT_IDLE_MS);
    };
    arm();
    nc.subscribe(inbox, {
      callback: (err, m) => {
        if (err) return reject(err);
        arm();
        if (m.data.length === 0) {
          clearTimeout(idle);
          const status = m.headers?.description;
          return status ? reject(new Error(`${stream}: snapshot ended with "${status}"`)) : resolve();
        }
        file.write(m.data);
        bytes += m.data.length;
        progress?.add(m.data.length);
        // The ack is the flow control: the server sends more once chunks are acknowledged.
        if (m.reply) m.respond(new Uint8Array(0));
      },
    });
  });
  const answer = await api(nc, `$JS.API.STREAM.SNAPSHOT.${stream}`, { deliver_subject: inbox, chunk_size: CHUNK_BYTES });
  // The archive is compressed: the stream's bytes bound the bar from above.
  progress = new Progress(out, answer.state?.bytes ?? 0, stream);
  progress.add(bytes);
  await ended;
  await new Promise((resolve) => file.end(resolve));
  writeFileSync(join(target, 'backup.json'), JSON.stringify({ config: answer.config, state: answer.state }, null, 2));
  progress.finish(`  ${answer.state?.messages ?? 0} messages`);
  return { stream, messages: answer.state?.messages ?? 0, archiveBytes: bytes };
}

/** One stream from <dir>/<stream>/ (the stream must not exist). */
export async function restoreStream(nc, stream, dir, out) {
  const meta = JSON.parse(readFileSync(join(dir, stream, 'backup.json'), 'utf8'));
  const archive = readFileSync(join(dir, stream, 'stream.tar.s2'));
  const start = await api(nc, `$JS.API.STREAM.RESTORE.${stream}`, { config: meta.config, state: meta.state });
  const progress = new Progress(out, archive.length, stream);
  for (let off = 0; off < archive.length; off += CHUNK_BYTES) {
    const chunk = archive.subarray(off, Math.min(archive.length, off + CHUNK_BYTES));
    const r = await nc.request(start.deliver_subject, chunk, { timeout: REQUEST_TIMEOUT_MS });
    // A non-empty answer mid-way is the server's verdict (an error): stop there.
    if (r.data.length > 0) throw new Error(`${stream}: ${JSON.parse(dec.decode(r.data)).error?.description ?? 'restore refused'}`);
    progress.add(chunk.length);
  }
  const fin = JSON.parse(dec.decode((await nc.request(start.deliver_subject, new Uint8Array(0), { timeout: REQUEST_TIMEOUT_MS })).data));
  if (fin.error) throw new Error(`${stream}: ${fin.error.description} (${fin.error.err_code})`);
  progress.finish(`  ${fin.state?.messages ?? 0} messages`);
  return { stream, messages: fin.state?.messages ?? 0 };
}

export async function backupAccount(nc, dir, out) {
  mkdirSync(dir, { recursive: true });
  const results = [];
  for (const name of await streamNames(nc)) results.push(await backupStream(nc, name, dir, out));
  return results;
}

export async function restoreAccount(nc, dir, out) {
  const names = readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory() && readdirSync(join(dir, n)).includes('backup.json')).sort();
  const results = [];
  for (const name of names) results.push(await restoreStream(nc, name, dir, out));
  return results;
}
