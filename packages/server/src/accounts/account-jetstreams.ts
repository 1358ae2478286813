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
// An account JWT pushed live (operator mode) goes through `apply`: limits changed, or JetStream started.
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
import type { Account } from './account.js';
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
  /** The 10039 answers of the accounts without JetStream, by account name (removed when one gets JetStream). */
  private readonly notEnabled = new Map<string, () => void>();
  private readonly serverStreams = new ServerStreams();
  private readonly sharedLoad = new SharedPlacementLoad();
  private readonly systemBus: InternalBus | undefined;
  /** Accounts being enabled by a live update (one start at a time per account). */
  private readonly starting = new Map<string, Promise<void>>();

  private constructor(private readonly p: AccountJetStreamsParts) {
    // The accounts' usage reports travel in the system account (announced: every node hears them), as nats-server's.
    const system = p.accounts.system;
    this.systemBus = p.cluster !== undefined && system !== null ? new InternalBus(system.router, true) : undefined;
  }

  static async start(p: AccountJetStreamsParts): Promise<AccountJetStreams> {
    const problem = accountReservationProblem(p.configured, p.options);
    if (problem !== undefined) throw new Error(`Can't start JetStream: Error enabling jetstream on configured accounts: ${problem}`);
    const out = new AccountJetStreams(p);
    try {
      for (const account of p.accounts.all()) {
        const conf = p.configured.find((a) => a.name === account.name);
        if (conf?.jetstream === undefined) {
          if (!apiImported(conf)) out.serveNotEnabled(account);
          continue;
        }
        await out.startOne(account, conf.jetstream);
      }
    } catch (err) {
      await out.stop();
      throw err;
    }
    return out;
  }

  private serveNotEnabled(account: Account): void {
    if (this.notEnabled.has(account.name)) return;
    const bus = new InternalBus(account.router, this.p.cluster !== undefined);
    this.notEnabled.set(account.name, serveJetStreamNotEnabled(bus, this.p.options.domain || undefined));
  }

  private async startOne(account: Account, conf: AccountJetStreamOptions): Promise<void> {
    const p = this.p;
    const o = p.options;
    const log = p.log.child({ component: 'jetstream', account: account.name });
    const js = new JetStreamService(
      // In a cluster its subscriptions are announced (in the account): requests reach it from any node.
      new InternalBus(account.router, p.cluster !== undefined),
      {
        storeDir: join(o.storeDir, ACCOUNTS_STORE_DIR, account.name),
        maxMemoryStoreBytes: o.maxMemoryStoreBytes,
        maxFileStoreBytes: o.maxFileStoreBytes,
        ...(o.domain ? { domain: o.domain } : {}),
        ...(o.syncIntervalMs !== undefined ? { fileSync: { intervalMs: o.syncIntervalMs } } : {}),
        serverName: p.serverName,
        serverId: p.serverId,
        accountLimits: limitsOf(conf),
        ...(conf.tiers !== undefined ? { accountTiers: tiersOf(conf)! } : {}),
        serverStreams: this.serverStreams,
        ...(p.cluster !== undefined ? { cluster: accountEnvironment(p.cluster, account.name, this.sharedLoad) } : {}),
        ...(this.systemBus !== undefined ? { systemBus: this.systemBus } : {}),
      },
      log,
    );
    await js.start();
    this.services.set(account.name, js);
  }

  /**
   * An account added or changed live (an account JWT pushed): its JetStream gets the new limits (raised or
   * lowered: the next check uses them), or starts when the account now has JetStream (nats-server's
   * updateAccountClaims → configJetStream), its 10039 answer removed; one whose JetStream limits are gone
   * has its JetStream stopped (its streams stay on disk, as nats-server's DisableJetStream) and, like an
   * account without JetStream, answers 10039. `all`: every account's options, for the server's reservation check. Errors are logged; the
   * account then keeps answering 10039.
   */
  async apply(account: Account, conf: AccountOptions, all: readonly AccountOptions[]): Promise<void> {
    const running = this.services.get(account.name);
    if (running !== undefined && conf.jetstream !== undefined) {
      running.accountLimits.update(limitsOf(conf.jetstream), tiersOf(conf.jetstream));
      return;
    }
    if (running !== undefined) {
      this.services.delete(account.name);
      await running.stop();
      this.p.log.info({ account: account.name }, 'jetstream disabled for account');
    }
    if (conf.jetstream === undefined) {
      if (!apiImported(conf)) this.serveNotEnabled(account);
      return;
    }
    const problem = accountReservationProblem(all, this.p.options);
    if (problem !== undefined) {
      this.p.log.error({ account: account.name }, `Error enabling jetstream for account: ${problem}`);
      this.serveNotEnabled(account);
      return;
    }
    const pending = this.starting.get(account.name);
    if (pending !== undefined) return pending;
    const jetstream = conf.jetstream;
    const started = (async () => {
      this.notEnabled.get(account.name)?.();
      this.notEnabled.delete(account.name);
      try {
        await this.startOne(account, jetstream);
        this.p.log.info({ account: account.name }, 'jetstream enabled for account');
      } catch (err) {
        this.p.log.error({ account: account.name, err: (err as Error).message }, 'could not enable jetstream for account');
        this.serveNotEnabled(account);
      }
    })().finally(() => this.starting.delete(account.name));
    this.starting.set(account.name, started);
    return started;
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
    await Promise.all(this.starting.values());
    for (const u of this.notEnabled.values()) u();
    this.notEnabled.clear();
    for (const js of this.services.values()) await js.stop();
    this.services.clear();
  }
}
