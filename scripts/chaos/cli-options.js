// Command-line options of `flotilla-chaos` (see usage()).
import { DEFAULT_FAULTS, FAULT_KINDS } from './fault-schedule.js';

export function usage() {
  return `flotilla-chaos: break a JetStream cluster on purpose and check nothing acknowledged was lost.

  npm run chaos -- [options]

Cluster (default: start a local 3-node Flotilla cluster with the fault hook on):
  --server flotilla|nats-server   which server to start locally (nats-server: --nats-server-bin, default /usr/sbin/nats-server)
  --nodes N                       nodes to start (3; 5 for R5 streams)
  --no-snapshot                   run Flotilla from the checkout's build, not a private copy made at the start
  --server-env KEY=VALUE          extra environment for every node (repeatable), e.g. FLOTILLA_TEST_BUGS=pub-ack-before-commit
  --urls u1,u2,...                target a running cluster instead (one client URL per node)
  --names n1,n2,...               its server names, in --urls order
  --monitor-urls m1,m2,...        its monitor URLs (for the meta leader), in --urls order
  --kill-cmd / --restart-cmd / --pause-cmd / --resume-cmd 'sh command with {name}'
  --partition                     the targeted cluster is Flotilla with FLOTILLA_FAULT_HOOK=1
Workload:
  --replicas 3,5                  streams to create (default 3, plus 5 with 5 or more nodes)
  --publishers N                  publishers per stream (default: one per node)
  --rate N                        acknowledged publishes per second per publisher (50; 0 = as fast as acks come)
  --payload BYTES                 message size (128)
  --pub-timeout MS                publish request timeout (2000)
Faults:
  --seed N                        seed of the fault schedule (random when omitted; printed)
  --duration 60s                  length of the faulty phase (ms, or with s/m)
  --faults a,b,...                kinds (default all the cluster supports): ${Object.keys(FAULT_KINDS).join(', ')}
  --fault-gap 4s                  mean pause between one fault's repair and the next
  --hold 6s                       every fault lasts exactly this long (default: drawn per kind)
Output:
  --json FILE                     write the JSON summary there ('-' = stdout)
  --keep-data                     keep the local cluster's stores and logs (always kept on a violation)
  --quiet                         no progress line
  --topology                      also an R<r> mirror and sourcing stream of each stream; verdict: every acked message in both, once, in order
Exit status: 0 no violation, 1 violations (replay with the printed seed), 2 the run could not be made.`;
}

function durationMs(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(text).trim());
  if (!m) throw new Error(`bad duration ${text}`);
  const n = Number(m[1]);
  return Math.round(m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1_000 : m[2] === 'ms' ? n : n);
}

const list = (text) => String(text).split(',').map((s) => s.trim()).filter(Boolean);

export function parseOptions(argv) {
  const o = {
    server: 'flotilla',
    natsServerBin: '/usr/sbin/nats-server',
    nodes: 3,
    serverEnv: {},
    snapshotBuild: true,
    urls: null,
    names: null,
    monitorUrls: [],
    commands: {},
    partition: false,
    replicas: null,
    publishers: null,
    rate: 50,
    payloadBytes: 128,
    pubTimeoutMs: 2_000,
    seed: null,
    durationMs: 60_000,
    faults: null,
    faultGapMs: 4_000,
    holdMs: null,
    json: null,
    keepData: false,
    quiet: false,
    topology: false,
    help: false,
    streamPrefix: 'CHAOS',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '--server': o.server = value(); break;
      case '--nats-server-bin': o.natsServerBin = value(); break;
      case '--nodes': o.nodes = Number(value()); break;
      case '--no-snapshot': o.snapshotBuild = false; break;
      case '--server-env': {
        const [k, ...rest] = value().split('=');
        o.serverEnv[k] = rest.join('=');
        break;
      }
      case '--urls': o.urls = list(value()); break;
      case '--names': o.names = list(value()); break;
      case '--monitor-urls': o.monitorUrls = list(value()); break;
      case '--kill-cmd': o.commands.kill = value(); break;
      case '--restart-cmd': o.commands.restart = value(); break;
      case '--pause-cmd': o.commands.pause = value(); break;
      case '--resume-cmd': o.commands.resume = value(); break;
      case '--partition': o.partition = true; break;
      case '--replicas': o.replicas = list(value()).map(Number); break;
      case '--publishers': o.publishers = Number(value()); break;
      case '--rate': o.rate = Number(value()); break;
      case '--payload': o.payloadBytes = Number(value()); break;
      case '--pub-timeout': o.pubTimeoutMs = durationMs(value()); break;
      case '--seed': o.seed = Number(value()) >>> 0; break;
      case '--duration': o.durationMs = durationMs(value()); break;
      case '--faults': o.faults = list(value()); break;
      case '--fault-gap': o.faultGapMs = durationMs(value()); break;
      case '--hold': o.holdMs = durationMs(value()); break;
      case '--json': o.json = value(); break;
      case '--keep-data': o.keepData = true; break;
      case '--quiet': o.quiet = true; break;
      case '--topology': o.topology = true; break;
      case '--stream-prefix': o.streamPrefix = value(); break;
      case '-h':
      case '--help': o.help = true; break;
      default: throw new Error(`unknown option ${arg}`);
    }
  }
  if (!['flotilla', 'nats-server'].includes(o.server)) throw new Error(`--server must be flotilla or nats-server`);
  if (o.urls) {
    o.names ??= o.urls.map((_, i) => `n${i + 1}`);
    o.nodes = o.urls.length;
  }
  if (!(o.nodes >= 1 && o.nodes <= 9)) throw new Error('--nodes must be 1..9');
  o.replicas ??= o.nodes >= 5 ? [3, 5] : [Math.min(3, o.nodes)];
  for (const r of o.replicas) if (!(r >= 1 && r <= o.nodes)) throw new Error(`R${r} needs at least ${r} nodes (--nodes ${o.nodes})`);
  o.publishers ??= o.nodes;
  o.faults ??= DEFAULT_FAULTS;
  for (const f of o.faults) if (!FAULT_KINDS[f]) throw new Error(`unknown fault ${f}`);
  return o;
}
