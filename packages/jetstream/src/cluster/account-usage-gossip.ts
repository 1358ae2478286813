// An account's JetStream usage across the cluster, as nats-server's jsAccount keeps it for its limits: each
// node reports the bytes its own replicas of the account's streams hold (on `$JSC.ARU.<account>.<server>`,
// nats-server's subject, in the system account), when they changed but at most every REPORT_MIN_MS, and every
// REPORT_EVERY_MS anyway; each node keeps the last report of every peer. The account's usage is this node's
// bytes plus every peer's, so an R3 stream's bytes count on each of its three replicas. A stream leader
// checks a publish against it (10002), adding the message once per replica (nats-server's wouldExceedLimits).
// Every JetStream account of a cluster with accounts gossips: /jsz's account figures are these too.
// With tiered limits each tier's bytes travel too (nats-server reports per tier), and each is summed alike.
import type { StorageUsage } from '../catalogue/account-limits.js';
import type { MessageBus } from '../message-bus.js';

export type { StorageUsage };

/** At most this many tiers are kept from one report (tiers are R1…R5; a bound against a bad report). */
const MAX_TIERS = 8;

/** nats-server's usageTick: a report is sent this often even when nothing changed. */
const REPORT_EVERY_MS = 1_500;
/** nats-server's minUsageUpdateWindow: changes are reported at most this often. */
const REPORT_MIN_MS = 250;
const SUBJECT_PREFIX = '$JSC.ARU.';

export interface AccountUsageGossipParts {
  readonly bus: MessageBus;
  readonly account: string;
  readonly selfName: string;
  /** The bytes this node's replicas of the account's streams hold now. */
  readonly local: () => StorageUsage;
  /** Reports are kept only from nodes of the cluster (so the table is bounded by its size). */
  readonly isPeer: (serverName: string) => boolean;
}

export class AccountUsageGossip {
  private readonly remote = new Map<string, StorageUsage>();
  private last: StorageUsage = { memory: 0, storage: 0 };
  private lastSentMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: () => void = () => undefined;

  constructor(private readonly parts: AccountUsageGossipParts) {}

  start(): void {
    const prefix = `${SUBJECT_PREFIX}${this.parts.account}.`;
    this.unsubscribe = this.parts.bus.subscribe(`${prefix}*`, (m) => {
      const node = m.subject.slice(prefix.length);
      if (node === this.parts.selfName || !this.parts.isPeer(node)) return;
      const usage = parseUsage(m.data);
      if (usage !== null) this.remote.set(node, usage);
    });
    this.timer = setInterval(() => this.tick(), REPORT_MIN_MS);
    this.timer.unref();
    this.send(this.parts.local());
  }

  stop(): void {
    this.unsubscribe();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The account's bytes on every node: this node's now, the peers' as last reported. */
  total(): StorageUsage {
    const own = this.parts.local();
    let memory = 0;
    let storage = 0;
    const tiers: Record<string, { memory: number; storage: number }> = {};
    for (const u of [own, ...this.remote.values()]) {
      memory += u.memory;
      storage += u.storage;
      for (const [name, t] of Object.entries(u.tiers ?? {})) {
        const sum = (tiers[name] ??= { memory: 0, storage: 0 });
        sum.memory += t.memory;
        sum.storage += t.storage;
      }
    }
    return Object.keys(tiers).length > 0 ? { memory, storage, tiers } : { memory, storage };
  }

  private tick(): void {
    const now = this.parts.local();
    const changed = now.memory !== this.last.memory || now.storage !== this.last.storage || JSON.stringify(now.tiers) !== JSON.stringify(this.last.tiers);
    if (changed || Date.now() - this.lastSentMs >= REPORT_EVERY_MS) this.send(now);
  }

  private send(usage: StorageUsage): void {
    this.last = usage;
    this.lastSentMs = Date.now();
    const subject = `${SUBJECT_PREFIX}${this.parts.account}.${this.parts.selfName}`;
    this.parts.bus.publish(subject, null, null, Buffer.from(JSON.stringify(usage)));
  }
}

function parseUsage(data: Uint8Array): StorageUsage | null {
  try {
    const v = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
    const memory = v['memory'];
    const storage = v['storage'];
    if (!isBytes(memory) || !isBytes(storage)) return null;
    const tiers: Record<string, { memory: number; storage: number }> = {};
    const raw = v['tiers'];
    if (raw !== undefined && raw !== null && typeof raw === 'object') {
      for (const [name, t] of Object.entries(raw as Record<string, Record<string, unknown>>).slice(0, MAX_TIERS)) {
        if (t === null || typeof t !== 'object' || !isBytes(t['memory']) || !isBytes(t['storage'])) return null;
        tiers[name] = { memory: t['memory'], storage: t['storage'] };
      }
    }
    return Object.keys(tiers).length > 0 ? { memory, storage, tiers } : { memory, storage };
  } catch {
    return null;
  }
}

function isBytes(n: unknown): n is number {
  return typeof n === 'number' && n >= 0;
}
