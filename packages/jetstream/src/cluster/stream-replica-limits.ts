// Discard-new limits decided by the leader before a message gets a sequence. The store enforces them too, but
// only at apply time, where a refusal would have to consume the sequence the leader already handed out (and
// leave a delete marker on every replica). So the leader projects the store's state plus the messages in
// flight: clearly under the limits, the message goes ahead; otherwise, with nothing in flight it decides
// exactly as the store would, and with messages in flight it waits for them to apply first.
import { StoreError, type MessageStore } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { apiErrorOfStore } from '../stream/stream.js';

export type LimitDecision = { kind: 'admit' } | { kind: 'wait' } | { kind: 'refuse'; error: ApiError };

const ADMIT: LimitDecision = { kind: 'admit' };
const WAIT: LimitDecision = { kind: 'wait' };

/** Bytes the store accounts for one message (mirrors FileStore / MemoryStore `accountedSize`). */
export function accountedBytes(kind: 'file' | 'memory', subjectBytes: number, headerLen: number, dataLen: number): number {
  if (kind === 'memory') return subjectBytes + headerLen + dataLen + 16;
  return headerLen === 0 ? 30 + subjectBytes + dataLen : 34 + subjectBytes + headerLen + dataLen;
}

export class DiscardNewGate {
  /** Messages proposed and not yet settled, and the bytes they will add at most. */
  private inFlightMsgs = 0;
  private inFlightBytes = 0;
  private readonly inFlightPerSubject = new Map<string, number>();

  constructor(private readonly store: MessageStore) {}

  get messagesInFlight(): number {
    return this.inFlightMsgs;
  }

  /** Whether `cfg` has a limit this gate must decide (discard new with a message, byte or per-subject bound). */
  static applies(cfg: Readonly<StreamConfig>): boolean {
    if (cfg.discard !== 'new') return false;
    return cfg.max_msgs > 0 || cfg.max_bytes > 0 || (cfg.max_msgs_per_subject > 0 && cfg.discard_new_per_subject === true);
  }

  decide(cfg: Readonly<StreamConfig>, subject: string, headerLen: number, dataLen: number): LimitDecision {
    if (!DiscardNewGate.applies(cfg)) return ADMIT;
    const state = this.store.state();
    const size = accountedBytes(this.store.kind, Buffer.byteLength(subject), headerLen, dataLen);
    const perSubject = cfg.max_msgs_per_subject;
    const subjectCount = perSubject > 0 ? this.store.filteredState(subject, 0).msgs : 0;
    const subjectInFlight = this.inFlightPerSubject.get(subject) ?? 0;
    // Every message in flight adds at most one message and its bytes: under the limits with all of them, the
    // store will take this one too (expiry and per-subject replacement only make room).
    const perSubjectOk = !(perSubject > 0 && cfg.discard_new_per_subject === true) || subjectCount + subjectInFlight < perSubject;
    const msgsOk = cfg.max_msgs <= 0 || state.messages + this.inFlightMsgs < cfg.max_msgs;
    const bytesOk = cfg.max_bytes <= 0 || state.bytes + this.inFlightBytes + size < cfg.max_bytes;
    if (perSubjectOk && msgsOk && bytesOk) return ADMIT;
    if (this.inFlightMsgs > 0) return WAIT;
    // Nothing in flight: the store's own rule, on its current state.
    const atSubjectLimit = perSubject > 0 && subjectCount >= perSubject;
    if (atSubjectLimit && cfg.discard_new_per_subject === true) return refuse('MAX_MSGS_PER_SUBJECT');
    if (cfg.max_msgs > 0 && state.messages >= cfg.max_msgs && !atSubjectLimit) return refuse('MAX_MSGS');
    if (cfg.max_bytes > 0 && state.bytes + size >= cfg.max_bytes && !atSubjectLimit) return refuse('MAX_BYTES');
    // At the per-subject limit the message replaces the subject's oldest: the store weighs the sizes.
    return ADMIT;
  }

  /** A message was admitted and proposed; `size` as returned by `sizeOf`. */
  added(subject: string, size: number, perSubject: boolean): void {
    this.inFlightMsgs++;
    this.inFlightBytes += size;
    if (perSubject) this.inFlightPerSubject.set(subject, (this.inFlightPerSubject.get(subject) ?? 0) + 1);
  }

  /** An admitted message settled (stored, refused or lost). */
  settled(subject: string, size: number, perSubject: boolean): void {
    this.inFlightMsgs--;
    this.inFlightBytes -= size;
    if (!perSubject) return;
    const n = (this.inFlightPerSubject.get(subject) ?? 1) - 1;
    if (n <= 0) this.inFlightPerSubject.delete(subject);
    else this.inFlightPerSubject.set(subject, n);
  }

  sizeOf(subject: string, headerLen: number, dataLen: number): number {
    return accountedBytes(this.store.kind, Buffer.byteLength(subject), headerLen, dataLen);
  }

  reset(): void {
    this.inFlightMsgs = 0;
    this.inFlightBytes = 0;
    this.inFlightPerSubject.clear();
  }
}

function refuse(code: 'MAX_MSGS' | 'MAX_BYTES' | 'MAX_MSGS_PER_SUBJECT'): LimitDecision {
  return { kind: 'refuse', error: apiErrorOfStore(new StoreError(code)) };
}
