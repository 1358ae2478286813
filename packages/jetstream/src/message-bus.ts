// How JetStream talks NATS without knowing sockets: the server implements this on its core router.
// Handlers run synchronously inside the publish that matched them; a handler that needs the message
// after it returns may keep the Buffers (they are never reused) but must not mutate them.

export interface BusMessage {
  readonly subject: string;
  readonly reply: string | null;
  /** The raw header block (`NATS/1.0…\r\n\r\n`), or null when the message has none. */
  readonly header: Buffer | null;
  readonly data: Buffer;
  /** Server id of the node the message came from over a route; absent for one published on this node. */
  readonly fromPeer?: string;
  /** Set for a message traced with Nats-Trace-Dest (ADR-41): the stream reports its part of the trace. */
  readonly trace?: BusTrace;
}

/**
 * A traced message's JetStream hop, as nats-server's `js` trace event. The stream calls `took` when the
 * message reaches it, then `stored` exactly once (after the store's flush, or at once with an error or
 * Nats-Trace-Only, which stores nothing and answers nothing).
 */
export interface BusTrace {
  readonly traceOnly: boolean;
  took(stream: string): void;
  stored(subject: string, noInterest: boolean, error: string | null): void;
  /** The header block to store: Nats-Trace-Dest switched off, so deliveries of it start no trace. */
  storedHeader(header: Buffer): Buffer;
}

export type BusHandler = (msg: BusMessage) => void;

export interface BusSubscribeOptions {
  /** A push consumer counts it as interest, like a client's (a mirror's or source's deliver subject). */
  deliveryTarget?: boolean;
  /** It reports traced messages (BusMessage.trace): it gets Nats-Trace-Only ones too, which others never see. */
  traced?: boolean;
}

export interface MessageBus {
  /**
   * Subscribes internally; returns the function that unsubscribes. `deliveryTarget`: a push consumer counts
   * it as interest, like a client's (a mirror's or source's deliver subject, topology/).
   */
  subscribe(subject: string, handler: BusHandler, queue?: string, opts?: BusSubscribeOptions): () => void;
  /** Publishes as the server itself (no echo suppression, no no-responders status). */
  publish(subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void;
  /**
   * Optional (consumers): delivers to the subscribers of `route` (a deliver subject or pull inbox) while the
   * message carries `subject` (the stored message's subject), as nats-server delivers JetStream messages.
   * Without it consumers fall back to `publish(route, …)` and clients see the route as the subject.
   */
  publishTo?(route: string, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void;
  /** True when some subscription (client or internal) matches `subject`. */
  hasInterest(subject: string): boolean;
  /**
   * True when a client connection's (or a peer's) subscription matches `subject`; the server's own
   * subscriptions (a stream's capture) do not count. What a push consumer delivers to, as in nats-server.
   */
  hasClientInterest(subject: string): boolean;
}

/** pino-compatible structural logger, so this package does not depend on pino. */
export interface JetStreamLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
