// In-process stand-ins for the clock, the JetStream context and the stream, so the consumer engine is tested
// without a server: a real MemoryStore behind a minimal StreamHandle (the bus is fake-bus.ts).
import { MemoryStore } from '@flotilla/store';
import type { ApiError } from '../../src/api/api-error.js';
import type { JetStreamContext } from '../../src/jetstream-context.js';
import type { JetStreamServiceOptions } from '../../src/jetstream-service.js';
import type { JetStreamLogger } from '../../src/message-bus.js';
import type { StreamConfig } from '../../src/stream/stream-config-types.js';
import type { StreamHandle } from '../../src/stream/stream-handle.js';
import type { Clock } from '../../src/consumer/clock.js';
import { FakeBus } from './fake-bus.js';

export { FakeBus, type Delivered } from './fake-bus.js';

/** Timers run only when the test advances time. */
export class FakeClock implements Clock {
  private now = 1_700_000_000_000;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 1;

  nowMs(): number {
    return this.now;
  }
  setTimer(fn: () => void, ms: number): () => void {
    const t = { at: this.now + Math.max(0, ms), fn, id: this.nextId++ };
    this.timers.push(t);
    return () => {
      this.timers = this.timers.filter((x) => x !== t);
    };
  }
  /** Moves time forward, firing due timers in time order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const t = this.timers[0];
      if (!t || t.at > end) break;
      this.timers.shift();
      this.now = Math.max(this.now, t.at);
      t.fn();
    }
    this.now = end;
  }
}

export function streamConfig(partial: Partial<StreamConfig> & { name: string }): StreamConfig {
  return {
    subjects: [partial.name.toLowerCase() + '.>'],
    retention: 'limits',
    max_consumers: -1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msgs_per_subject: -1,
    max_msg_size: -1,
    discard: 'old',
    storage: 'memory',
    num_replicas: 1,
    duplicate_window: 120e9,
    sealed: false,
    deny_delete: false,
    deny_purge: false,
    allow_rollup_hdrs: false,
    allow_direct: false,
    mirror_direct: false,
    ...partial,
  };
}

export class FakeStream implements StreamHandle {
  readonly store = new MemoryStore();
  readonly created = new Date(0).toISOString();
  private listeners = new Set<(seq: number, subject: string) => void>();

  constructor(
    public config: StreamConfig,
    readonly dir: string = '/nonexistent',
  ) {}
  get name(): string {
    return this.config.name;
  }
  onStored(listener: (seq: number, subject: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  removeMessage(seq: number): Promise<boolean> {
    return this.store.delete(seq, { erase: false });
  }
  async publish(subject: string, data: string | Uint8Array, header?: Uint8Array): Promise<number> {
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    const { seq } = await this.store.append(subject, header, body);
    for (const l of this.listeners) l(seq, subject);
    return seq;
  }
}

const silentLog: JetStreamLogger = { debug() {}, info() {}, warn() {}, error() {} };

export class FakeContext implements JetStreamContext {
  readonly log = silentLog;
  readonly options: JetStreamServiceOptions = { storeDir: '/nonexistent', maxMemoryStoreBytes: -1, maxFileStoreBytes: -1, serverName: 't', serverId: 't' };
  readonly table = new Map<string, StreamHandle>();
  constructor(readonly bus: FakeBus) {}
  stream(name: string): StreamHandle | undefined {
    return this.table.get(name);
  }
  streams(): Iterable<StreamHandle> {
    return this.table.values();
  }
  respond(reply: string | null, type: string, body: object): void {
    if (reply !== null) this.bus.publish(reply, null, null, Buffer.from(JSON.stringify({ type, ...body })));
  }
  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void {
    if (reply !== null) this.bus.publish(reply, null, null, Buffer.from(JSON.stringify({ type, error: error.toJSON(), ...extra })));
  }
  advisory(subject: string, body: object): void {
    this.bus.publish(subject, null, null, Buffer.from(JSON.stringify(body)));
  }
}
