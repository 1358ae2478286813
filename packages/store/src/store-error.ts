/** Why a store operation failed. */
export type StoreErrorCode =
  | 'MAX_MSGS' // discard new: the stream is at max_msgs
  | 'MAX_BYTES' // discard new: the stream is at max_bytes
  | 'MAX_MSGS_PER_SUBJECT' // discard new per subject: the subject is at max_msgs_per_subject
  | 'MAX_MSG_SIZE' // the message is larger than max_msg_size
  | 'SEQUENCE_MISMATCH'
  | 'NOT_FOUND' // no message at that sequence (or matching that subject)
  | 'CLOSED'
  | 'CORRUPT'
  | 'IO';

/** The text of each code; the limit ones are nats-server's store error texts (ErrMaxMsgs…) verbatim. */
export const STORE_ERROR_TEXT: Record<StoreErrorCode, string> = {
  MAX_MSGS: 'maximum messages exceeded',
  MAX_BYTES: 'maximum bytes exceeded',
  MAX_MSGS_PER_SUBJECT: 'maximum messages per subject exceeded',
  MAX_MSG_SIZE: 'message size exceeds maximum allowed',
  SEQUENCE_MISMATCH: 'expected sequence does not match store',
  NOT_FOUND: 'no message found',
  CLOSED: 'store is closed',
  CORRUPT: 'store data is corrupt',
  IO: 'store i/o error',
};

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, detail?: string) {
    super(detail ? `${STORE_ERROR_TEXT[code]}: ${detail}` : STORE_ERROR_TEXT[code]);
    this.name = 'StoreError';
    this.code = code;
  }
}

/** Plain words for the OS errors a store write meets (nats-server's out-of-space check looks for these). */
const OS_ERROR_TEXT: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in system',
  EIO: 'input/output error',
};

/** LevelDB reports OS errors as text only ("IO error: <file>: Too many open files"). */
const OS_ERROR_WORDS: Array<[RegExp, string]> = [
  [/no space left on device/i, 'ENOSPC'],
  [/too many open files in system/i, 'ENFILE'],
  [/too many open files/i, 'EMFILE'],
  [/disk quota exceeded/i, 'EDQUOT'],
];

function osCodeOf(err: unknown): string | undefined {
  // Bounded: a cause chain of at most 4 links is looked at.
  for (let e: unknown = err, depth = 0; e !== null && e !== undefined && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code in OS_ERROR_TEXT) return code;
    const message = e instanceof Error ? e.message : String(e);
    for (const [words, os] of OS_ERROR_WORDS) if (words.test(message)) return os;
  }
  return undefined;
}

/** A failed write or open as an `IO` StoreError (an existing StoreError passes through). */
export function storeIoError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const code = osCodeOf(err);
  const text = code !== undefined ? OS_ERROR_TEXT[code] : undefined;
  return new StoreError('IO', text ?? (err instanceof Error ? err.message : String(err)));
}
