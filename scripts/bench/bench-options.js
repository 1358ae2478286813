// Command line of `flotilla-bench`: suites, which workloads, comparison target, bounds, outputs.
import { parseArgs } from 'node:util';
import { WORKLOADS } from './workloads.js';

export const SUITES = ['core', 'ws', 'leaf', 'js', 'cluster', 'all'];

export const USAGE = `usage: flotilla-bench [core|ws|leaf|js|cluster|all ...] [options]     (npm run bench -- …)
  suites      core: server RSS with --conns idle connections, pub→sub 16/128 B, request/reply, and ws
              ws: pub→sub over the WebSocket listener (ws → ws 16/128 B, ws → TCP 128 B)
              leaf: pub→sub across a leafnode link (hub → leaf and leaf → hub, 128 B), request/reply across it
              js: R1 publish awaited and windowed, counter increments windowed, pull and push drain with acks, KV put/get
              cluster: R3 publish awaited and windowed on three nodes
              all (default): every workload, plus R3 pull drain
  --compare nats-server|none   side by side with nats-server (default: when nats-server is on PATH)
  --nats-server PATH           the nats-server binary (default: from PATH)
  --servers NAME,NAME          measure only these of flotilla, "flotilla sync 1s", nats-server
  --flotilla PATH              the flotilla launcher to measure (default: this checkout's bin/flotilla.js)
  --only ID,ID                 just these workloads (${WORKLOADS.map((w) => w.id).join(', ')})
  --rounds N (3)               rounds; each starts every server afresh, servers alternate within a round
  --msgs N (200000)            most messages per publish, drain, KV or request run
  --core-msgs N (1000000)      messages per core pub→sub run
  --duration-ms N (5000)       longest time a publish, KV or request run sends for
  --warmup-ms N (2000)         the same requests sent first and not counted (0: none)
  --bytes N (128)  --window N (1000)  --batch N (500)  --keys N (1000)
  --clients N (1)              client processes a windowed publish or core publish is spread over
  --conns N (1000)             idle connections for the RSS measurement
  --streams N (1000)           idle R3 streams for cluster-idle-streams (run it with --only; ~2 min a server)
  --mirror-msgs N (1000000)    messages in the origin stream of mirror-catchup
  --interval-sync DUR|off (1s) also run R1 JetStream on Flotilla with jetstream.sync_interval DUR
  --json FILE  --svg FILE      results as JSON; latency percentiles as an SVG chart
  --smoke                      tiny counts, one round: checks every workload runs, says nothing of speed
  raft | store                 the in-process Raft and message-store benches (own options)`;

const int = (text, name, min) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return n;
};

/** Parses argv into options; throws with a message for the user on bad input. */
export function parseBenchArgs(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      compare: { type: 'string', default: 'auto' },
      'nats-server': { type: 'string' },
      flotilla: { type: 'string' },
      servers: { type: 'string' },
      only: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      msgs: { type: 'string', default: '200000' },
      'core-msgs': { type: 'string', default: '1000000' },
      'duration-ms': { type: 'string', default: '5000' },
      'warmup-ms': { type: 'string', default: '2000' },
      bytes: { type: 'string', default: '128' },
      window: { type: 'string', default: '1000' },
      batch: { type: 'string', default: '500' },
      keys: { type: 'string', default: '1000' },
      clients: { type: 'string', default: '1' },
      conns: { type: 'string', default: '1000' },
      streams: { type: 'string', default: '1000' },
      'mirror-msgs': { type: 'string', default: '1000000' },
      'interval-sync': { type: 'string', default: '1s' },
      json: { type: 'string' },
      svg: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  for (const p of positionals) if (!SUITES.includes(p)) throw new Error(`unknown suite ${p}`);
  if (!['auto', 'none', 'nats-server'].includes(values.compare)) throw new Error('--compare takes nats-server or none');
  const suites = positionals.length === 0 ? ['all'] : positionals;
  let selected = WORKLOADS.filter((w) => suites.includes('all') || w.suites.some((s) => suites.includes(s)));
  if (values.only) {
    const ids = values.only.split(',').map((s) => s.trim());
    for (const id of ids) if (!WORKLOADS.some((w) => w.id === id)) throw new Error(`unknown workload ${id}`);
    selected = WORKLOADS.filter((w) => ids.includes(w.id));
  }
  const smoke = values.smoke;
  const opts = {
    help: values.help,
    suites,
    workloads: selected,
    compare: values.compare,
    natsServerPath: values['nats-server'] ?? null,
    flotillaPath: values.flotilla ?? null,
    servers: values.servers ? values.servers.split(',').map((s) => s.trim()) : null,
    rounds: smoke ? 1 : int(values.rounds, 'rounds', 1),
    msgs: smoke ? 2_000 : int(values.msgs, 'msgs', 1),
    coreMsgs: smoke ? 20_000 : int(values['core-msgs'], 'core-msgs', 1),
    durationMs: smoke ? 300 : int(values['duration-ms'], 'duration-ms', 1),
    warmupMs: smoke ? 0 : int(values['warmup-ms'], 'warmup-ms', 0),
    bytes: int(values.bytes, 'bytes', 0),
    window: smoke ? 100 : int(values.window, 'window', 1),
    batch: int(values.batch, 'batch', 1),
    keys: smoke ? 20 : int(values.keys, 'keys', 1),
    clients: int(values.clients, 'clients', 1),
    conns: smoke ? 50 : int(values.conns, 'conns', 1),
    streams: smoke ? 10 : int(values.streams, 'streams', 1),
    mirrorMsgs: smoke ? 2_000 : int(values['mirror-msgs'], 'mirror-msgs', 1),
    intervalSync: smoke || values['interval-sync'] === 'off' ? null : values['interval-sync'],
    json: values.json ?? null,
    svg: values.svg ?? null,
    smoke,
    // drains need a filled stream: at least this many messages when no publish run left one
    drainMinMsgs: smoke ? 2_000 : 100_000,
    // bound on a drain or a fill, and on how long a run may wait for a stalled server
    maxRunMs: smoke ? 10_000 : 60_000,
  };
  return opts;
}
