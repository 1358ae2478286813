// `$JS.EVENT.ADVISORY.STREAM.{CREATED,UPDATED,DELETED}.<stream>`, sent by whichever catalogue made the change.
import { randomBytes } from 'node:crypto';
import { formatTimeNs, nowNs } from '../api/time-format.js';

export interface AdvisorySink {
  readonly domain: string | undefined;
  /** Publishes an advisory JSON on `subject` (nothing when nobody listens). */
  advisory(subject: string, body: object): void;
}

export type StreamAction = 'CREATED' | 'UPDATED' | 'DELETED';

const ACTION_NAME: Record<StreamAction, string> = { CREATED: 'create', UPDATED: 'modify', DELETED: 'delete' };

export function sendStreamAdvisory(sink: AdvisorySink, kind: StreamAction, name: string): void {
  const domain = sink.domain;
  sink.advisory(`$JS.EVENT.ADVISORY.STREAM.${kind}.${name}`, {
    type: 'io.nats.jetstream.advisory.v1.stream_action',
    id: randomBytes(11).toString('hex'),
    timestamp: formatTimeNs(nowNs()),
    stream: name,
    action: ACTION_NAME[kind],
    ...(domain ? { domain } : {}),
  });
}
