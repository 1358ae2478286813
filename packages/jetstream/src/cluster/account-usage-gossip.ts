// An account's JetStream usage across the cluster, as nats-server's jsAccount keeps it for its limits: each
// node reports the bytes its own replicas of the account's streams hold (on `$JSC.ARU.<account>.<server>`,
// nats-server's subject, in the system account), when they changed but at most every REPORT_MIN_MS, and every
// REPORT_EVERY_MS anyway; each node keeps the last report of every peer. The account's usage is this node's
// bytes plus every peer's, so an R3 stream's bytes count on each of its three replicas. A stream leader
// checks a publish against it (10002), adding the message once per replica (nats-server's wouldExceedLimits).
// Every JetStream account of a cluster with accounts gossips: /jsz's account figures are these too.
import type { MessageBus } from '../message-bus.js';

/** Bytes held, per storage type. */
export interface StorageUsage {
  readonly memory: number;
  readonly storage: number;
}

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
    let memory = own.memory;
    let storage = own.storage;
    for (const u of this.remote.values()) {
      memory += u.memory;
      storage += u.storage;
    }
    return { memory, storage };
  }

  private tick(): void {
    const now = this.parts.local();
    const changed = now.memory !== this.last.memory || now.storage !== this.last.storage;
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
    if (typeof memory !== 'number' || typeof storage !== 'number' || !(memory >= 0) || !(storage >= 0)) return null;
    return { memory, storage };
  } catch {
    return null;
  }
}
