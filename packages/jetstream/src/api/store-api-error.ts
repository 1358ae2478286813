// How a store failure reaches an API caller: the store's typed StoreError (its own codes and texts) mapped to
// a JetStream error here, so the store knows nothing of err_codes.
import { StoreError, STORE_ERROR_TEXT, type StoreErrorCode } from '@flotilla/store';
import type { ApiError } from './api-error.js';
import { JsErrors } from './api-errors.js';
import { publicErrorText } from './error-text.js';

/** A limit refusal: 10077 with the store's text alone (nats-server's ErrMaxMsgs etc.), never a detail. */
const limitRefused = (err: StoreError): ApiError => JsErrors.storeFailed(STORE_ERROR_TEXT[err.code]);
/** Any other failure: 10077 with the error's own (path-free) text. */
const storeFailed = (err: StoreError): ApiError => JsErrors.storeFailed(publicErrorText(err));

/** Every StoreError code's API error; a new code must be given one here. */
export const STORE_ERROR_API: Readonly<Record<StoreErrorCode, (err: StoreError) => ApiError>> = {
  MAX_MSGS: limitRefused,
  MAX_BYTES: limitRefused,
  MAX_MSGS_PER_SUBJECT: limitRefused,
  MAX_MSG_SIZE: () => JsErrors.messageSizeExceeds(),
  NOT_FOUND: () => JsErrors.noMessageFound(),
  SEQUENCE_MISMATCH: storeFailed,
  CLOSED: storeFailed,
  CORRUPT: storeFailed,
  IO: storeFailed,
};

/** A StoreError (or any unexpected failure) as the API error a publisher or API caller sees. */
export function apiErrorOfStore(err: unknown): ApiError {
  if (err instanceof StoreError) return STORE_ERROR_API[err.code](err);
  return JsErrors.storeFailed(publicErrorText(err));
}
