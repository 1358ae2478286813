// `npm run bench -- core [--rounds N] [--msgs N]`: core NATS throughput of Flotilla and, when
// `nats-server` is on PATH, of nats-server on the same machine, alternating round by round.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FLOTILLA_NODE_FLAGS } from '../../bin/node-flags.js';
import { findOnPath, printTable, rssMb, sleep, startServer } from './_side-by-side.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const clientScript = fileURLToPath(new URL('./_core-client.js', import.meta.url));

export async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '3' },
      msgs: { type: 'string', default: '1000000' },
      'req-ms': { type: 'string', default: '3000' },
      conns: { type: 'string', default: '1000' },
    },
  });
  const rounds = Number(values.rounds);
  const msgs = Number(values.msgs);
  const reqMs = Number(values['req-ms']);
  const servers = [{ name: 'flotilla', cmd: process.execPath, args: [...FLOTILLA_NODE_FLAGS, join(root, 'bin/flotilla.js')] }];
  const natsServer = findOnPath('nats-server');
  if (natsServer) servers.push({ name: 'nats-server', cmd: natsServer, args: [] });
  else console.log('nats-server not on PATH: measuring flotilla only (apt-get install nats-server to compare)');

  const results = new Map(); // `${server}|${workload}` -> number[]
  const record = (server, workload, value) => {
    const key = `${server}|${workload}`;
    results.set(key, [...(results.get(key) ?? []), value]);
  };
  const workloads = ['pubsub 16B msgs/s', 'pubsub 128B msgs/s', 'req/rep round trips/s'];
  for (let round = 1; round <= rounds; round++) {
    for (const srv of servers) {
      const node = await startServer(srv);
      try {
        for (const size of [16, 128]) {
          record(srv.name, `pubsub ${size}B msgs/s`, await pubSub(node.url, msgs, size));
        }
        record(srv.name, 'req/rep round trips/s', await reqRep(node.url, reqMs));
        record(srv.name, 'RSS after load MB', rssMb(node.proc.pid));
        console.log(`round ${round} ${srv.name}: done`);
      } finally {
        await node.stop();
      }
    }
  }
  // Idle RSS with many connections, once per server.
  for (const srv of servers) {
    const node = await startServer(srv);
    try {
      record(srv.name, 'RSS idle MB', rssMb(node.proc.pid));
      const conns = await startClient(['conns', node.url, values.conns]);
      await sleep(1_000);
      record(srv.name, `RSS with ${values.conns} conns MB`, rssMb(node.proc.pid));
      conns.proc.kill('SIGKILL');
    } finally {
      await node.stop();
    }
  }
  printTable(
    servers.map((s) => s.name),
    [...workloads, 'RSS after load MB', 'RSS idle MB', `RSS with ${values.conns} conns MB`],
    results,
    '(medians; throughput figures are higher-is-better, RSS lower-is-better)',
  );
}

async function pubSub(url, count, bytes) {
  const subject = `bench.${bytes}`;
  const sub = await startClient(['sub', url, subject, String(count)]);
  const pub = await startClient(['pub', url, subject, String(count), String(bytes)], false);
  const result = await sub.next();
  await pub.exited;
  await sub.exited;
  if (result.msgs !== count) console.log(`  warning: subscriber got ${result.msgs}/${count}`);
  return Math.round((result.msgs / result.ms) * 1000);
}

async function reqRep(url, durationMs) {
  const rep = await startClient(['reply', url, 'bench.echo']);
  const req = await startClient(['req', url, 'bench.echo', String(durationMs), '128'], false);
  const result = await req.next();
  rep.proc.kill('SIGKILL');
  return Math.round((result.reqs / result.ms) * 1000);
}

/** Spawns a bench client; when waitReady, resolves after it printed {"ready":true}. */
async function startClient(args, waitReady = true) {
  const proc = spawn(process.execPath, [clientScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`bench client ${args[0]} ended early`);
    return JSON.parse(value);
  };
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  if (waitReady) await next();
  return { proc, next, exited };
}
