// The whole option resolution for the `flotilla` binary: defaults, then the config file (-c), then
// flags — flags win, as in nats-server. The binary maps the result kinds to exit codes
// (usage-error → 2, config-error → 1).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseCommandLine, type CliFlags } from './cli.js';
import { ConfParseError, parseConfDocument } from './conf-parser.js';
import { applyConfDocument } from './conf-to-options.js';
import { DEFAULT_TLS_TIMEOUT_MS, defaultServerOptions, type ServerOptions, type TlsOptions } from './options.js';
import { USAGE_TEXT } from './usage-text.js';
import { systemAccountProblem } from './system-account-name.js';
import { addSystemOnlyNoAuthUser } from './system-account-only.js';
import { applyOperatorMode } from '../operator/operator-accounts.js';
import { websocketOptionsProblem } from '../websocket/websocket-options-check.js';

export { USAGE_TEXT };

export type OptionsResult =
  | { kind: 'run'; options: ServerOptions; warnings: string[] }
  | { kind: 'check-ok'; configFile: string; warnings: string[] } // -t -c FILE succeeded
  | { kind: 'version' }
  | { kind: 'signal'; expr: string } // -sl/--signal: send it to a running server and exit
  | { kind: 'help'; text: string }
  | { kind: 'usage-error'; message: string; usage: string } // exit 2
  | { kind: 'config-error'; message: string }; // exit 1, message names file:line

/** nats-server warns above this payload size (8 MiB) but still runs. */
const LARGE_PAYLOAD_WARN_BYTES = 8 * 1024 * 1024;

/**
 * With -js and no store directory nats-server uses a directory under the system temp dir; Flotilla does
 * the same (the project's `npm start` passes `-sd ./data`, so that path is explicit there).
 */
export function defaultJetStreamStoreDir(): string {
  return path.join(tmpdir(), 'flotilla', 'jetstream');
}

export function resolveOptions(
  argv: string[],
  env: Record<string, string | undefined>,
  readFile: (p: string) => string = (p) => readFileSync(p, 'utf8'),
): OptionsResult {
  const cli = parseCommandLine(argv);
  if (cli.kind === 'usage-error') return { kind: 'usage-error', message: cli.message, usage: USAGE_TEXT };
  const flags = cli.flags;
  if (flags.version) return { kind: 'version' };
  if (flags.help) return { kind: 'help', text: USAGE_TEXT };
  // nats-server handles --signal before reading any config file.
  if (flags.signal !== undefined) return { kind: 'signal', expr: flags.signal };
  if (flags.checkConfig && flags.configFile === undefined) {
    return usageError('must specify [-c, --config] option to check configuration file syntax');
  }

  const options = defaultServerOptions();
  const warnings: string[] = [];
  let fileDebug = false;
  let fileTrace = false;
  let httpHostExplicit = false;
  let maxPayloadLocation: string | undefined;

  if (flags.configFile !== undefined) {
    const configFile = flags.configFile;
    options.configFile = configFile;
    let text: string;
    try {
      text = readFile(configFile);
    } catch (err) {
      return { kind: 'config-error', message: `error opening config file: ${(err as Error).message}` };
    }
    let applied;
    try {
      const doc = parseConfDocument(text, { filePath: configFile, env, readInclude: readFile });
      applied = applyConfDocument(doc, options);
    } catch (err) {
      if (err instanceof ConfParseError) return { kind: 'config-error', message: err.message };
      throw err;
    }
    if (applied.errors.length > 0) return { kind: 'config-error', message: applied.errors.join('\n') };
    warnings.push(...applied.warnings);
    fileDebug = applied.debug;
    fileTrace = applied.trace;
    httpHostExplicit = applied.httpHostExplicit;
    maxPayloadLocation = applied.maxPayloadLocation;
  }

  const flagProblem = applyFlags(flags, options, warnings);
  if (flagProblem) return usageError(flagProblem);
  const tlsProblem = applyTlsFlags(flags, options);
  if (tlsProblem) return { kind: 'config-error', message: tlsProblem };

  const debug = flags.debug ?? fileDebug;
  const trace = flags.trace ?? fileTrace;
  options.logLevel = trace ? 'trace' : debug ? 'debug' : 'info';
  // nats-server binds monitoring to the client host unless the file names one (http: "host:port").
  if (!httpHostExplicit) options.httpHost = options.host;
  if (options.jetstream.enabled && options.jetstream.storeDir === '') {
    options.jetstream.storeDir = defaultJetStreamStoreDir();
    warnings.push(`JetStream store directory not set (-sd / store_dir); using ${options.jetstream.storeDir}`);
  }

  // Checked after merging, as nats-server does when it starts (flotilla also checks this under -t).
  if (options.maxPayloadBytes > options.maxPendingBytes) {
    const where = maxPayloadLocation ? `${maxPayloadLocation}: ` : '';
    return {
      kind: 'config-error',
      message: `${where}max_payload (${options.maxPayloadBytes}) cannot be higher than max_pending (${options.maxPendingBytes})`,
    };
  }
  if (options.maxPayloadBytes > LARGE_PAYLOAD_WARN_BYTES) {
    warnings.push(`max_payload of ${options.maxPayloadBytes} bytes is over 8 MiB; large payloads are discouraged`);
  }

  const operatorProblem = applyOperatorMode(options, warnings);
  if (operatorProblem !== undefined) return { kind: 'config-error', message: operatorProblem };
  const accountsProblem = accountsCombinationProblem(options);
  if (accountsProblem !== undefined) return { kind: 'config-error', message: accountsProblem };
  const systemProblem = systemAccountProblem(options);
  if (systemProblem !== undefined) return { kind: 'config-error', message: systemProblem };
  const websocketProblem = websocketOptionsProblem(options);
  if (websocketProblem !== undefined) return { kind: 'config-error', message: websocketProblem };
  addSystemOnlyNoAuthUser(options);

  if (flags.checkConfig) return { kind: 'check-ok', configFile: flags.configFile!, warnings };
  return { kind: 'run', options, warnings };
}

/** no_auth_user must name a configured user (nats-server's validateNoAuthUser). */
function accountsCombinationProblem(o: ServerOptions): string | undefined {
  const noAuth = o.noAuthUser;
  if (noAuth !== undefined) {
    const users = [...(o.authorization?.users ?? []), ...(o.accounts ?? []).flatMap((a) => a.users)];
    if (users.length === 0) return `no_auth_user: "${noAuth}" present, but users/nkeys are not defined`;
    if (!users.some((u) => u.user === noAuth)) {
      return `no_auth_user: "${noAuth}" not present as user or nkey in authorization block or account configuration`;
    }
  }
  return undefined;
}

/** Flags over file values. Returns a usage problem, if any. */
function applyFlags(flags: CliFlags, options: ServerOptions, warnings: string[]): string | undefined {
  if (flags.host !== undefined) options.host = flags.host;
  if (flags.port !== undefined) options.port = flags.port;
  if (flags.serverName !== undefined) {
    if (/\s/.test(flags.serverName)) return 'server name can not contain spaces';
    options.serverName = flags.serverName;
  }
  if (flags.httpPort !== undefined) options.httpPort = flags.httpPort;
  if (flags.jetstream !== undefined) options.jetstream.enabled = flags.jetstream;
  if (flags.storeDir !== undefined) options.jetstream.storeDir = flags.storeDir;
  if (flags.logFile !== undefined) options.logFile = flags.logFile;
  if (flags.logSizeLimitBytes !== undefined) options.logSizeLimitBytes = flags.logSizeLimitBytes;
  if (flags.portsFileDir !== undefined) options.portsFileDir = flags.portsFileDir;
  if (flags.pidFile !== undefined) options.pidFile = flags.pidFile;
  if (flags.clientAdvertise !== undefined) options.clientAdvertise = flags.clientAdvertise;

  if (flags.user !== undefined || flags.pass !== undefined || flags.authToken !== undefined) {
    if ((flags.user !== undefined || flags.pass !== undefined) && flags.authToken !== undefined) {
      return 'cannot combine --user/--pass with --auth (token)';
    }
    const auth = options.authorization ?? { timeoutSec: 2 };
    if (flags.user !== undefined) auth.user = flags.user;
    if (flags.pass !== undefined) auth.password = flags.pass;
    if (flags.authToken !== undefined) {
      auth.token = flags.authToken;
      delete auth.user;
      delete auth.password;
    } else if (auth.user !== undefined) {
      delete auth.token;
    }
    options.authorization = auth;
  }

  if (flags.clusterName !== undefined || flags.clusterListen !== undefined || flags.routes !== undefined) {
    const cluster = options.cluster ?? { routes: [] };
    if (flags.clusterName !== undefined) cluster.name = flags.clusterName;
    if (flags.clusterListen === null) delete cluster.listen;
    else if (flags.clusterListen !== undefined) cluster.listen = flags.clusterListen;
    if (flags.routes !== undefined) {
      if (flags.routes.length > 0 && cluster.listen === undefined) {
        return 'solicited routes require cluster capabilities, e.g. --cluster';
      }
      cluster.routes = flags.routes;
      if (flags.routeCredentials !== undefined) cluster.routeCredentials = { ...cluster.routeCredentials, ...flags.routeCredentials };
    }
    if (flags.clusterAuth !== undefined) {
      // --cluster credentials replace the file's, but not its authorization timeout.
      const timeoutMs = cluster.authorization?.timeoutMs;
      cluster.authorization = { ...flags.clusterAuth, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
    }
    options.cluster = cluster;
  }
  if (options.cluster !== undefined) {
    if (flags.clusterAdvertise !== undefined) options.cluster.advertise = flags.clusterAdvertise;
    if (flags.noAdvertise !== undefined) options.cluster.noAdvertise = flags.noAdvertise;
  }

  for (const name of flags.ignoredFlags) warnings.push(`flag -${name} is accepted for nats-server compatibility but has no effect in flotilla`);
  return undefined;
}

/**
 * Any of --tls/--tlscert/--tlskey/--tlsverify/--tlscacert turns client TLS on, over the file's `tls {}`
 * (nats-server's overrideTLS); cert and key must then be known. Returns nats-server's error, if any.
 */
function applyTlsFlags(flags: CliFlags, options: ServerOptions): string | undefined {
  const given =
    flags.tls === true || flags.tlsCert !== undefined || flags.tlsKey !== undefined || flags.tlsVerify === true || flags.tlsCaCert !== undefined;
  if (!given) return undefined;
  const base = options.tls;
  const certFile = flags.tlsCert ?? base?.certFile ?? '';
  const keyFile = flags.tlsKey ?? base?.keyFile ?? '';
  if (certFile === '') return 'TLS Server certificate must be present and valid';
  if (keyFile === '') return 'TLS Server private key must be present and valid';
  const tls: TlsOptions = {
    certFile,
    keyFile,
    verify: flags.tlsVerify ?? base?.verify ?? false,
    verifyAndMap: base?.verifyAndMap ?? false,
    timeoutMs: base?.timeoutMs ?? DEFAULT_TLS_TIMEOUT_MS,
  };
  const caFile = flags.tlsCaCert ?? base?.caFile;
  if (caFile !== undefined) tls.caFile = caFile;
  options.tls = tls;
  return undefined;
}

function usageError(message: string): OptionsResult {
  return { kind: 'usage-error', message, usage: USAGE_TEXT };
}
