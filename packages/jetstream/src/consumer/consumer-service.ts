// Consumers of every stream: the `$JS.API.CONSUMER.*` endpoints and the delivery engines.
// (Contract skeleton by the lead; the consumers engineer owns and grows this file.)
import type { BusMessage } from '../message-bus.js';
import type { JetStreamContext } from '../jetstream-context.js';
import type { StreamHandle } from '../stream/stream-handle.js';

export class ConsumerService {
  constructor(private readonly ctx: JetStreamContext) {}

  /**
   * `$JS.API.CONSUMER.…` requests; `tokens` are the subject's tokens after `$JS.API` (e.g.
   * ['CONSUMER', 'CREATE', 'S', 'C']). Returns false for subjects it does not serve (no reply is sent).
   */
  handleApi(tokens: readonly string[], msg: BusMessage): boolean {
    void tokens;
    void msg;
    void this.ctx;
    return false;
  }

  /** A stream was created, or loaded at start: load its persisted consumers and start them. */
  async streamAdded(stream: StreamHandle): Promise<void> {
    void stream;
  }

  /** The stream was updated (limits, retention or subjects may have changed). */
  streamUpdated(stream: StreamHandle): void {
    void stream;
  }

  /** Messages were purged or deleted: consumers move their floors. */
  streamPurged(stream: StreamHandle): void {
    void stream;
  }

  /** The stream is being deleted: stop and remove its consumers (state included). */
  async streamRemoved(stream: StreamHandle): Promise<void> {
    void stream;
  }

  consumerCount(streamName: string): number {
    void streamName;
    return 0;
  }

  /** Stops timers and flushes consumer state. */
  async stop(): Promise<void> {}
}
