// `node scripts/bench/quorum-fsync-floor.js [--seconds 5] [--rounds 3] [--bytes 128] [--dir DIR]`
// The ceiling of "R3, each ack awaited, fsync before every ack" on this machine, with no broker at all: four
// processes (client, leader, two followers) on loopback TCP with 4-byte length framing; the leader sends each
// request to both followers and writes it to its own pre-zeroed O_DSYNC file (as Flotilla's Raft log WAL
// does); a follower writes and answers; the client gets its answer once the leader's own write and one
// follower's are done (only durable answers count) — the least a quorum-durable ack needs, with no Raft,
// gRPC, JetStream or NATS parsing. Variants say where the time goes: every replica syncing (what a Raft
// group does), only the two a quorum needs (the third writes without syncing), and none (the hops alone). Rounds alternate the variants (the disk is shared and noisy); medians.
import { fork } from 'node:child_process';
import { closeSync, constants, fdatasync, fsyncSync, openSync, write, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
/** Per record: the payload plus what a Raft entry adds around it (index, term, group, framing). */
const RECORD_OVERHEAD_BYTES = 139;
const FILE_BYTES = 32 * 1024 * 1024;
const CHILD_TIMEOUT_MS = 60_000;
const VARIANTS = [
  { name: 'all 3 sync', leader: true, followers: [true, true] },
  { name: 'quorum (2) sync', leader: true, followers: [true, false] },
  { name: 'no sync', leader: false, followers: [false, false] },
];

function option(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
}

/** A pre-zeroed, durable file; returns a writer of `record` at consecutive offsets (O_DSYNC when `sync`). */
function recordFile(path, sync) {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC | (sync ? constants.O_DSYNC : 0), 0o644);
  writeSync(fd, Buffer.alloc(FILE_BYTES), 0, FILE_BYTES, 0);
  fsyncSync(fd);
  let offset = 0;
  return {
    append(record, done) {
      if (offset + record.length > FILE_BYTES) offset = 0; // bounded: wrap (the bench never fills it in time)
      const at = offset;
      offset += record.length;
      write(fd, record, 0, record.length, at, (err) => {
        if (err) throw err;
        done();
      });
    },
    close: () => closeSync(fd),
  };
}

/** Calls `onFrame` with each length-prefixed frame arriving on `socket`. */
function readFrames(socket, onFrame) {
  let buf = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    let at = 0;
    while (buf.length - at >= 4) {
      const n = buf.readUInt32LE(at);
      if (buf.length - at - 4 < n) break;
      onFrame(buf.subarray(at + 4, at + 4 + n));
      at += 4 + n;
    }
    buf = buf.subarray(at);
  });
}

function frame(body) {
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

async function follower({ file, sync }) {
  const log = recordFile(file, sync);
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    readFrames(socket, (f) => {
      // The answer says whether the write is durable: only durable answers count toward a synced quorum.
      const answer = Buffer.from([f[0], f[1], f[2], f[3], sync ? 1 : 0]);
      log.append(f, () => socket.write(frame(answer)));
    });
  });
  process.send({ port: await listen(server) });
  process.on('disconnect', () => process.exit(0));
}

async function leader({ file, sync, followerPorts }) {
  const log = recordFile(file, sync);
  const pending = new Map();
  const settle = (id, p) => {
    if (!p.own || p.acks < 1) return;
    pending.delete(id);
    p.socket.write(frame(p.id));
  };
  const followers = followerPorts.map((port) => {
    const s = createConnection(port, '127.0.0.1');
    s.setNoDelay(true);
    readFrames(s, (f) => {
      const id = f.readUInt32LE(0);
      const p = pending.get(id);
      if (p === undefined || (sync && f[4] !== 1)) return;
      p.acks++;
      settle(id, p);
    });
    return s;
  });
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    readFrames(socket, (f) => {
      const id = f.readUInt32LE(0);
      const p = { id: Buffer.from(f.subarray(0, 4)), own: false, acks: 0, socket };
      pending.set(id, p);
      const record = Buffer.allocUnsafe(f.length + RECORD_OVERHEAD_BYTES).fill(0x61);
      f.copy(record, 0);
      const out = frame(record);
      for (const s of followers) s.write(out);
      log.append(record, () => {
        p.own = true;
        settle(id, p);
      });
    });
  });
  process.send({ port: await listen(server) });
  process.on('disconnect', () => process.exit(0));
}

async function client({ port, seconds, bytes }) {
  const socket = createConnection(port, '127.0.0.1');
  socket.setNoDelay(true);
  const latenciesMs = [];
  const endAt = performance.now() + seconds * 1000;
  const maxOps = seconds * 100_000;
  let id = 0;
  let sentAt = 0;
  const send = () => {
    const body = Buffer.alloc(bytes + 4, 0x62);
    body.writeUInt32LE(++id, 0);
    sentAt = performance.now();
    socket.write(frame(body));
  };
  readFrames(socket, () => {
    const now = performance.now();
    latenciesMs.push(now - sentAt);
    if (now < endAt && latenciesMs.length < maxOps) return send();
    latenciesMs.sort((a, b) => a - b);
    process.send({ ops: latenciesMs.length, seconds: (now - (endAt - seconds * 1000)) / 1000, p50Ms: latenciesMs[latenciesMs.length >> 1], p90Ms: latenciesMs[Math.floor(latenciesMs.length * 0.9)] });
    socket.destroy();
  });
  socket.on('connect', send);
}

/** Starts this script in `role` and resolves with its first message. */
function child(role, args, children) {
  const c = fork(SELF, ['--role', role, '--args', JSON.stringify(args)], { stdio: 'inherit' });
  children.push(c);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} timed out`)), CHILD_TIMEOUT_MS);
    c.once('message', (m) => {
      clearTimeout(timer);
      resolve(m);
    });
    c.once('exit', (code) => code !== 0 && reject(new Error(`${role} exited with ${code}`)));
  });
}

async function runVariant(variant, dir, seconds, bytes) {
  const children = [];
  try {
    const followerPorts = [];
    for (let i = 0; i < 2; i++) followerPorts.push((await child('follower', { file: join(dir, `f${i}.log`), sync: variant.followers[i] }, children)).port);
    const { port } = await child('leader', { file: join(dir, 'leader.log'), sync: variant.leader, followerPorts }, children);
    return await child('client', { port, seconds, bytes }, children);
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

async function main() {
  const args = process.argv.slice(2);
  const role = option(args, 'role', '');
  if (role !== '') {
    const a = JSON.parse(option(args, 'args', '{}'));
    return role === 'follower' ? follower(a) : role === 'leader' ? leader(a) : client(a);
  }
  const seconds = Number(option(args, 'seconds', '5'));
  const rounds = Number(option(args, 'rounds', '3'));
  const bytes = Number(option(args, 'bytes', '128'));
  const dir = await mkdtemp(join(option(args, 'dir', tmpdir()), 'flotilla-bench-floor-'));
  const results = new Map(VARIANTS.map((v) => [v.name, []]));
  try {
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) {
        const m = await runVariant(v, dir, seconds, bytes);
        const rate = m.ops / m.seconds;
        results.get(v.name).push({ rate, p50Ms: m.p50Ms, p90Ms: m.p90Ms });
        process.stdout.write(`round ${r + 1}/${rounds} ${v.name.padEnd(16)} ${Math.round(rate).toLocaleString('en-US')} acks/s  p50 ${m.p50Ms.toFixed(3)} ms  p90 ${m.p90Ms.toFixed(3)} ms\n`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  process.stdout.write(`\nfloor of one publisher awaiting each ack, ${bytes} B, 3 local processes + client, no broker (medians of ${rounds}):\n`);
  for (const [name, rs] of results) {
    process.stdout.write(`  ${name.padEnd(16)} ${Math.round(median(rs.map((x) => x.rate))).toLocaleString('en-US').padStart(7)} acks/s  p50 ${median(rs.map((x) => x.p50Ms)).toFixed(3)} ms\n`);
  }
}

await main();
