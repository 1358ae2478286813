// JetStream per account on one node, as nats-server gives each JetStream-enabled account its own
// (jsAccount): with `accounts {}` configured, an account with `jetstream` gets a JetStreamService of its own
// on its own router, its streams under `<store_dir>/jetstream/<account>/streams/` (nats-server's layout) and
// its limits; every other account, the global one included, answers its `$JS.API` with 10039. Streams of
// one account are not seen from another: each service subscribes `$JS.API.>` and its streams' subjects in
// its account's Sublist only. Without accounts the server keeps its one JetStream (server.ts).
// In a cluster each account's JetStream is a member of that account's own meta group (`_meta_.<account>`:
// its catalogue, so stream names are unique per account, and its limits enforced by that group's leader)
// and of its streams' groups, over the node's one Raft log and transport; its subscriptions are announced
// in the account (the links carry it, cluster/account-route.ts), so any node serves the account's API.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { subjectMatchesFilter } from '@flotilla/protocol';
import {
  JetStreamService,
  ServerStreams,
  SharedPlacementLoad,
  serveJetStreamNotEnabled,
  type AccountLimits,
  type AccountTiers,
  type ClusterEnvironment,
} from '@flotilla/jetstream';
import type { AccountJetStreamLimitOptions, AccountJetStreamOptions, AccountOptions, JetStreamOptions } from '../config/options.js';
import { InternalBus } from '../internal-bus.js';
import type { Accounts } from './accounts.js';

/** nats-server's JetStreamStoreDir: the folder under store_dir that holds one folder per account. */
const ACCOUNTS_STORE_DIR = 'jetstream';

export interface AccountJetStreamsParts {
  readonly accounts: Accounts;
  readonly configured: readonly AccountOptions[];
  readonly options: JetStreamOptions;
  readonly serverName: string;
  readonly serverId: string;
  readonly log: Logger;
  /** The node's clustered JetStream plumbing; absent on one node. */
  readonly cluster?: ClusterEnvironment;
}

/**
 * The node's environment as one account's members see it: the same plumbing, their account named, and the
 * placement load shared by the node's accounts.
 */
function accountEnvironment(env: ClusterEnvironment, account: string, sharedLoad: SharedPlacementLoad): ClusterEnvironment {
  // A prototype, not a spread: the environment's getters (clusterName) stay live.
  return Object.assign(Object.create(env) as ClusterEnvironment, { account, sharedLoad });
}

/** The JetStream limits of an account (or of one tier) as the JetStream package takes them. */
export function limitsOf(o: AccountJetStreamLimitOptions): AccountLimits {
  return {
    max_memory: o.maxMemoryBytes,
    max_storage: o.maxStoreBytes,
    max_streams: o.maxStreams,
    max_consumers: o.maxConsumers,
    max_ack_pending: o.maxAckPending,
    memory_max_stream_bytes: o.memoryMaxStreamBytes,
    storage_max_stream_bytes: o.storeMaxStreamBytes,
    max_bytes_required: o.maxBytesRequired,
  };
}

/** The account's tiered limits as the JetStream package takes them; undefined without tiers. */
export function tiersOf(o: AccountJetStreamOptions): AccountTiers | undefined {
  if (o.tiers === undefined) return undefined;
  const out: Record<string, AccountLimits> = {};
  for (const [name, t] of Object.entries(o.tiers)) out[name] = limitsOf(t);
  return out;
}

/** Every limit set of the account: its tiers', else its default one. */
function limitSets(o: AccountJetStreamOptions): AccountJetStreamLimitOptions[] {
  return o.tiers !== undefined ? Object.values(o.tiers) : [o];
}

/**
 * nats-server's sufficientResources on a single server: the accounts' max_mem / max_file together must fit
 * the server's limits, or JetStream does not start.
 */
export function accountReservationProblem(configured: readonly AccountOptions[], o: JetStreamOptions): string | undefined {
  let memory = 0;
  let store = 0;
  for (const a of configured) {
    if (a.jetstream === undefined) continue;
    for (const l of limitSets(a.jetstream)) {
      if (l.maxMemoryBytes > 0) memory += l.maxMemoryBytes;
      if (l.maxStoreBytes > 0) store += l.maxStoreBytes;
    }
  }
  if (o.maxMemoryStoreBytes >= 0 && memory > o.maxMemoryStoreBytes) return 'insufficient memory resources available';
  if (o.maxFileStoreBytes >= 0 && store > o.maxFileStoreBytes) return 'insufficient storage resources available';
  return undefined;
}

/**
 * nats-server leaves out an account's own API import when one of its imports already brings `$JS.API.INFO`
 * from another account (serviceImportShadowed): its requests are that account's to answer.
 */
function apiImported(account: AccountOptions | undefined): boolean {
  return (account?.imports ?? []).some((i) => i.kind === 'service' && subjectMatchesFilter('$JS.API.INFO', i.to ?? i.subject));
}

export class AccountJetStreams {
  private readonly services = new Map<string, JetStreamService>();
  private readonly undo: Array<() => void> = [];

  private constructor() {}

  static async start(p: AccountJetStreamsParts): Promise<AccountJetStreams> {
    const problem = accountReservationProblem(p.configured, p.options);
    if (problem !== undefined) throw new Error(`Can't start JetStream: Error enabling jetstream on configured accounts: ${problem}`);
    const out = new AccountJetStreams();
    const serverStreams = new ServerStreams();
    const sharedLoad = new SharedPlacementLoad();
    // The accounts' usage reports travel in the system account (announced: every node hears them), as nats-server's.
    const system = p.accounts.system;
    const systemBus = p.cluster !== undefined && system !== null ? new InternalBus(system.router, true) : undefined;
    const o = p.options;
    try {
      for (const account of p.accounts.all()) {
        const conf = p.configured.find((a) => a.name === account.name);
        const bus = new InternalBus(account.router);
        if (conf?.jetstream === undefined) {
          if (!apiImported(conf)) out.undo.push(serveJetStreamNotEnabled(bus, o.domain || undefined));
          continue;
        }
        const log = p.log.child({ component: 'jetstream', account: account.name });
        const js = new JetStreamService(
          // In a cluster its subscriptions are announced (in the account): requests reach it from any node.
          p.cluster === undefined ? bus : new InternalBus(account.router, true),
          {
            storeDir: join(o.storeDir, ACCOUNTS_STORE_DIR, account.name),
            maxMemoryStoreBytes: o.maxMemoryStoreBytes,
            maxFileStoreBytes: o.maxFileStoreBytes,
            ...(o.domain ? { domain: o.domain } : {}),
            ...(o.syncIntervalMs !== undefined ? { fileSync: { intervalMs: o.syncIntervalMs } } : {}),
            serverName: p.serverName,
            serverId: p.serverId,
            accountLimits: limitsOf(conf.jetstream),
            ...(conf.jetstream.tiers !== undefined ? { accountTiers: tiersOf(conf.jetstream)! } : {}),
            serverStreams,
            ...(p.cluster !== undefined ? { cluster: accountEnvironment(p.cluster, account.name, sharedLoad) } : {}),
            ...(systemBus !== undefined ? { systemBus } : {}),
          },
          log,
        );
        await js.start();
        out.services.set(account.name, js);
      }
    } catch (err) {
      await out.stop();
      throw err;
    }
    return out;
  }

  /** The JetStream of the account called `name`; undefined when it has none. */
  of(name: string): JetStreamService | undefined {
    return this.services.get(name);
  }

  /** The first JetStream-enabled account's (monitoring's single-JetStream views read it); null: none. */
  get first(): JetStreamService | null {
    return this.services.values().next().value ?? null;
  }

  entries(): IterableIterator<[string, JetStreamService]> {
    return this.services.entries();
  }

  async stop(): Promise<void> {
    for (const u of this.undo.splice(0)) u();
    for (const js of this.services.values()) await js.stop();
    this.services.clear();
  }
}
