// Command-line flags in the style of Go's `flag` package, with nats-server's flag set.
// Hand-written rather than a POSIX/GNU parser because nats-server has multi-letter single-dash flags
// (`-js`, `-sd`, `-DV`, `-ms`) that such parsers would read as bundles of one-letter flags, and because Go
// treats `-flag` and `--flag` alike, takes `-flag=value`, and stops at the first non-flag argument.
import { normaliseRouteUrl, parseListenUrl, parsePort, urlCredentials, type HostPort } from './host-port.js';
import type { ClusterAuthorization } from './options.js';

export interface CliFlags {
  help: boolean;
  version: boolean;
  /** -t: check the config file and exit */
  checkConfig: boolean;
  configFile?: string;
  host?: string;
  port?: number;
  serverName?: string;
  httpPort?: number;
  jetstream?: boolean;
  storeDir?: string;
  user?: string;
  pass?: string;
  authToken?: string;
  /** undefined = not given; an explicit `-D=false` overrides the config file too */
  debug?: boolean;
  trace?: boolean;
  logFile?: string;
  /** --log_size_limit: rotate the log file past this many bytes */
  logSizeLimitBytes?: number;
  clusterName?: string;
  /** --cluster / --cluster_listen; null when given as "" (which disables clustering in nats-server) */
  clusterListen?: HostPort | null;
  /** --routes, normalised host:port; [] when given as "" */
  routes?: string[];
  /** user info of the --cluster URL: the route auth other nodes must present (as nats-server) */
  clusterAuth?: ClusterAuthorization;
  /** user info of --routes URLs, keyed by the normalised route */
  routeCredentials?: Record<string, ClusterAuthorization>;
  portsFileDir?: string;
  /** -P / --pid: where the process id is written */
  pidFile?: string;
  /** -sl / --signal: `command[=pid]` to send to a running server (nats-server's processSignal) */
  signal?: string;
  /** --client_advertise / --cluster_advertise / --no_advertise (nats-server's) */
  clientAdvertise?: string;
  clusterAdvertise?: string;
  noAdvertise?: boolean;
  /** --tls, --tlscert, --tlskey, --tlsverify, --tlscacert: any of them turns client TLS on */
  tls?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsVerify?: boolean;
  tlsCaCert?: string;
  /** nats-server flags accepted so scripts keep working, but without effect in Flotilla */
  ignoredFlags: string[];
}

export type CliParse = { kind: 'flags'; flags: CliFlags } | { kind: 'usage-error'; message: string };

type FlagKind = 'bool' | 'string' | 'int';

interface FlagSpec {
  names: string[];
  kind: FlagKind;
  /** applies the value; returns an error message when the value is unacceptable */
  apply?: (flags: CliFlags, value: string | number | boolean, shownName: string) => string | undefined;
}

const setPort =
  (field: 'port' | 'httpPort') =>
  (flags: CliFlags, value: string | number | boolean, shownName: string): string | undefined => {
    const port = parsePort(String(value), true);
    if (port === undefined) return `invalid value "${value}" for flag -${shownName}: port must be -1..65535`;
    flags[field] = port;
    return undefined;
  };

const FLAG_SPECS: FlagSpec[] = [
  { names: ['h', 'help'], kind: 'bool', apply: (f, v) => void (f.help = v as boolean) },
  { names: ['help_tls'], kind: 'bool', apply: (f, v) => void (f.help = v as boolean) },
  { names: ['v', 'version'], kind: 'bool', apply: (f, v) => void (f.version = v as boolean) },
  { names: ['a', 'addr', 'net'], kind: 'string', apply: (f, v) => void (f.host = v as string) },
  { names: ['p', 'port'], kind: 'int', apply: setPort('port') },
  { names: ['n', 'name', 'server_name'], kind: 'string', apply: (f, v) => void (f.serverName = v as string) },
  { names: ['m', 'http_port'], kind: 'int', apply: setPort('httpPort') },
  // `-c ""` means no config file, as in nats-server
  { names: ['c', 'config'], kind: 'string', apply: (f, v) => void (v === '' ? delete f.configFile : (f.configFile = v as string)) },
  { names: ['t'], kind: 'bool', apply: (f, v) => void (f.checkConfig = v as boolean) },
  { names: ['js', 'jetstream'], kind: 'bool', apply: (f, v) => void (f.jetstream = v as boolean) },
  { names: ['sd', 'store_dir'], kind: 'string', apply: (f, v) => void (f.storeDir = v as string) },
  { names: ['user'], kind: 'string', apply: (f, v) => void (f.user = v as string) },
  { names: ['pass'], kind: 'string', apply: (f, v) => void (f.pass = v as string) },
  { names: ['auth'], kind: 'string', apply: (f, v) => void (f.authToken = v as string) },
  { names: ['D', 'debug'], kind: 'bool', apply: (f, v) => void (f.debug = v as boolean) },
  { names: ['V', 'trace', 'VV'], kind: 'bool', apply: (f, v) => void (f.trace = v as boolean) },
  {
    names: ['DV', 'DVV'],
    kind: 'bool',
    apply: (f, v) => {
      f.debug = v as boolean;
      f.trace = v as boolean;
      return undefined;
    },
  },
  { names: ['l', 'log'], kind: 'string', apply: (f, v) => void (f.logFile = v as string) },
  {
    names: ['log_size_limit'],
    kind: 'int',
    apply: (f, v, shown) => {
      if ((v as number) < 0) return `invalid value "${v}" for flag -${shown}: must not be negative`;
      f.logSizeLimitBytes = v as number;
      return undefined;
    },
  },
  { names: ['cluster_name'], kind: 'string', apply: (f, v) => void (f.clusterName = v as string) },
  {
    names: ['cluster', 'cluster_listen'],
    kind: 'string',
    apply: (f, v, shown) => {
      if (v === '') {
        f.clusterListen = null;
        return undefined;
      }
      const hp = parseListenUrl(v as string);
      if ('error' in hp) return `invalid value "${v}" for flag -${shown}: ${hp.error}`;
      f.clusterListen = hp;
      const creds = urlCredentials(v as string);
      if (creds !== undefined) f.clusterAuth = creds;
      return undefined;
    },
  },
  {
    names: ['routes'],
    kind: 'string',
    apply: (f, v, shown) => {
      const routes: string[] = [];
      for (const part of (v as string).split(',')) {
        if (part.trim() === '') continue;
        const r = normaliseRouteUrl(part);
        if ('error' in r) return `invalid value "${v}" for flag -${shown}: ${r.error}`;
        routes.push(r.route);
        const creds = urlCredentials(part);
        if (creds !== undefined) (f.routeCredentials ??= {})[r.route] = creds;
      }
      f.routes = routes;
      return undefined;
    },
  },
  { names: ['ports_file_dir'], kind: 'string', apply: (f, v) => void (f.portsFileDir = v as string) },
  { names: ['tls'], kind: 'bool', apply: (f, v) => void (f.tls = v as boolean) },
  { names: ['tlscert'], kind: 'string', apply: (f, v) => void (f.tlsCert = v as string) },
  { names: ['tlskey'], kind: 'string', apply: (f, v) => void (f.tlsKey = v as string) },
  { names: ['tlsverify'], kind: 'bool', apply: (f, v) => void (f.tlsVerify = v as boolean) },
  { names: ['tlscacert'], kind: 'string', apply: (f, v) => void (f.tlsCaCert = v as string) },
  { names: ['P', 'pid'], kind: 'string', apply: (f, v) => void (f.pidFile = v as string) },
  { names: ['sl', 'signal'], kind: 'string', apply: (f, v) => void (v === '' ? delete f.signal : (f.signal = v as string)) },
  { names: ['client_advertise'], kind: 'string', apply: (f, v) => void (f.clientAdvertise = v as string) },
  { names: ['no_advertise'], kind: 'bool', apply: (f, v) => void (f.noAdvertise = v as boolean) },
  { names: ['cluster_advertise'], kind: 'string', apply: (f, v) => void (f.clusterAdvertise = v as string) },
  // Accepted for nats-server compatibility, no effect in Flotilla (reported as warnings).
  { names: ['ms', 'https_port'], kind: 'int' },
  { names: ['T', 'logtime'], kind: 'bool' },
  { names: ['s', 'syslog'], kind: 'bool' },
  { names: ['r', 'remote_syslog'], kind: 'string' },
  { names: ['max_traced_msg_len'], kind: 'int' },
  { names: ['connect_retries'], kind: 'int' },
  { names: ['profile'], kind: 'int' },
];

const SPEC_BY_NAME = new Map<string, FlagSpec>();
for (const spec of FLAG_SPECS) for (const name of spec.names) SPEC_BY_NAME.set(name, spec);

/** Go strconv.ParseBool */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

export function parseCommandLine(argv: string[]): CliParse {
  const flags: CliFlags = { help: false, version: false, checkConfig: false, ignoredFlags: [] };
  let i = 0;
  let positional: string[] = [];
  // Each iteration consumes one or two arguments, so this is bounded by argv.length.
  while (i < argv.length) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional = argv.slice(i + 1);
      break;
    }
    if (arg.length < 2 || arg[0] !== '-') {
      positional = argv.slice(i); // Go's flag package stops at the first non-flag argument
      break;
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    if (body === '' || body[0] === '-' || body[0] === '=') return usageError(`bad flag syntax: ${arg}`);
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const inlineValue = eq >= 0 ? body.slice(eq + 1) : undefined;
    const spec = SPEC_BY_NAME.get(name);
    if (!spec) return usageError(`flag provided but not defined: -${name}`);
    i++;

    let value: string | number | boolean;
    if (spec.kind === 'bool') {
      if (inlineValue === undefined) value = true;
      else {
        const b = parseGoBool(inlineValue);
        if (b === undefined) return usageError(`invalid boolean value "${inlineValue}" for -${name}: parse error`);
        value = b;
      }
    } else {
      let text = inlineValue;
      if (text === undefined) {
        if (i >= argv.length) return usageError(`flag needs an argument: -${name}`);
        text = argv[i]!;
        i++;
      }
      if (spec.kind === 'int') {
        if (!/^[+-]?\d+$/.test(text)) return usageError(`invalid value "${text}" for flag -${name}: parse error`);
        value = Number(text);
      } else value = text;
    }

    if (!spec.apply) {
      if (!flags.ignoredFlags.includes(name)) flags.ignoredFlags.push(name);
      continue;
    }
    const problem = spec.apply(flags, value, name);
    if (problem) return usageError(problem);
  }

  // nats-server accepts the words `version` and `help` as commands; anything else is an error.
  if (positional.length > 0) {
    const command = positional[0]!.toLowerCase();
    if (command === 'version') flags.version = true;
    else if (command === 'help') flags.help = true;
    else return usageError(`unrecognized command: "${positional[0]}"`);
  }
  return { kind: 'flags', flags };
}

function usageError(message: string): CliParse {
  return { kind: 'usage-error', message };
}
