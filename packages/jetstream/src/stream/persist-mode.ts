// ADR-56 persist modes. `default`: a PubAck only after the message's group commit is on disk (R1) or a
// quorum holds it (R3). `async` trades that for latency on R1 file streams: the ack goes out once the message
// is appended, the store's group commit follows on its own. nats-server 2.14 (checkStreamCfg /
// configUpdateCheck) refuses it on memory storage, on replicated streams and with atomic batches, and an
// update may not change the mode either way.
import { JsErrors } from '../api/api-errors.js';
import type { StreamConfig } from './stream-config-types.js';

/** What the create checks read of a request (its fields as decoded, before defaults). */
interface PersistModeRequest {
  persist_mode?: 'async';
  storage?: StreamConfig['storage'];
  allow_atomic?: boolean;
}

/** checkStreamCfg's persist-mode rules; `replicas` after the zero default. Throws 10052. */
export function checkPersistMode(req: PersistModeRequest, replicas: number): void {
  if (req.persist_mode !== 'async') return;
  const invalid = JsErrors.streamInvalidConfig;
  if ((req.storage ?? 'file') !== 'file') throw invalid('async persist mode is only supported on file storage');
  if (replicas > 1) throw invalid('async persist mode is not supported on replicated streams');
  if (req.allow_atomic === true) throw invalid('async persist mode is not supported with atomic batch publish');
}

export function checkPersistModeUpdate(old: StreamConfig, next: StreamConfig): void {
  if (old.persist_mode !== next.persist_mode) {
    throw JsErrors.streamInvalidConfig('stream configuration update can not change persist mode');
  }
}

/** True when this stream acknowledges before the write is durable. */
export const acksBeforeDurable = (cfg: Readonly<StreamConfig>): boolean => cfg.persist_mode === 'async';
