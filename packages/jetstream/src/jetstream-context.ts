// The services JetStream's parts share: the bus, logging, the stream table, and response helpers.
import type { MessageBus, JetStreamLogger } from './message-bus.js';
import type { JetStreamServiceOptions } from './jetstream-options.js';
import type { StreamHandle } from './stream/stream-handle.js';
import type { ApiError } from './api/api-error.js';
import type { AccountLimitsCheck } from './catalogue/account-limits.js';

export interface JetStreamContext {
  readonly bus: MessageBus;
  readonly log: JetStreamLogger;
  readonly options: JetStreamServiceOptions;
  /** The account's limits on consumers (per-stream count, max_ack_pending); absent: none. */
  readonly accountLimits?: AccountLimitsCheck;
  stream(name: string): StreamHandle | undefined;
  streams(): Iterable<StreamHandle>;
  /** JSON response `{type, ...body}` to `reply` (nothing when reply is null). */
  respond(reply: string | null, type: string, body: object): void;
  /** JSON error response `{type, error:{code, err_code, description}, ...extra}`. */
  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void;
  /** Publishes an advisory/event JSON on `subject` (e.g. `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<S>.<C>`). */
  advisory(subject: string, body: object): void;
}
