// What the consumer side sees of a stream. The stream engineer's Stream class implements it.
import type { MessageStore } from '@flotilla/store';
import type { StreamConfig } from './stream-config-types.js';

export interface StreamHandle {
  readonly name: string;
  readonly config: Readonly<StreamConfig>;
  readonly store: MessageStore;
  /** Directory of this stream's persistent state; consumers keep theirs under `<dir>/consumers/`. */
  readonly dir: string;
  /** Creation time (RFC 3339, as StreamInfo.created). */
  readonly created: string;
  /** Calls `listener` after each message is stored, in sequence order; returns the remover. */
  onStored(listener: (seq: number, subject: string) => void): () => void;
  /** Retention (workqueue ack, interest all-acked) removes messages through here. */
  removeMessage(seq: number): Promise<boolean>;
}
