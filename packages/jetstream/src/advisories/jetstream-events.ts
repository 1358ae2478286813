// JetStream advisories and metric events that nats-server 2.14 publishes (jetstream_events.go): the API
// audit, stream leader elected / quorum lost, and the consumer ack sample. Bodies keep nats-server's field
// names and order: type, id, timestamp, then the event's own fields, `domain` last (omitted when empty).
import { randomId } from '../consumer/random-id.js';

const SCHEMA = 'io.nats.jetstream.advisory.v1.';
const METRIC_SCHEMA = 'io.nats.jetstream.metric.v1.';

export const API_AUDIT_SUBJECT = '$JS.EVENT.ADVISORY.API';
export const STREAM_LEADER_ELECTED_PREFIX = '$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.';
export const STREAM_QUORUM_LOST_PREFIX = '$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.';
export const CONSUMER_LEADER_ELECTED_PREFIX = '$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.';
export const CONSUMER_ACK_METRIC_PREFIX = '$JS.EVENT.METRIC.CONSUMER.ACK.';

/** One member of a Raft group as nats-server's PeerInfo writes it (name, current, offline, active ns, lag, peer). */
export interface PeerInfoJson {
  name: string;
  current: boolean;
  offline?: true;
  active: number;
  lag?: number;
  peer: string;
}

function typed(type: string): { type: string; id: string; timestamp: string } {
  return { type, id: randomId(22), timestamp: new Date().toISOString() };
}

function withDomain<T extends object>(body: T, domain: string | undefined): T {
  return domain ? { ...body, domain } : body;
}

/** io.nats.jetstream.advisory.v1.api_audit: one per answered `$JS.API` request. */
export function apiAuditEvent(server: string, subject: string, request: string, response: string, domain: string | undefined): object {
  // `client` is nats-server's ClientInfo of the requester; the bus does not carry it, so null (as its nil).
  const body: Record<string, unknown> = { ...typed(`${SCHEMA}api_audit`), server, client: null, subject };
  if (request !== '') body['request'] = request;
  body['response'] = response;
  return withDomain(body, domain);
}

/** io.nats.jetstream.advisory.v1.stream_leader_elected. */
export function streamLeaderElectedEvent(stream: string, leader: string, replicas: PeerInfoJson[], domain: string | undefined): object {
  return withDomain({ ...typed(`${SCHEMA}stream_leader_elected`), stream, leader, replicas }, domain);
}

/** io.nats.jetstream.advisory.v1.consumer_leader_elected. */
export function consumerLeaderElectedEvent(stream: string, consumer: string, leader: string, replicas: PeerInfoJson[], domain: string | undefined): object {
  return withDomain({ ...typed(`${SCHEMA}consumer_leader_elected`), stream, consumer, leader, replicas }, domain);
}

/** io.nats.jetstream.advisory.v1.stream_quorum_lost. */
export function streamQuorumLostEvent(stream: string, replicas: PeerInfoJson[], domain: string | undefined): object {
  return withDomain({ ...typed(`${SCHEMA}stream_quorum_lost`), stream, replicas }, domain);
}

/** io.nats.jetstream.metric.v1.consumer_ack: `ack_time` is nanoseconds from delivery to ack. */
export function consumerAckMetricEvent(
  stream: string,
  consumer: string,
  consumerSeq: number,
  streamSeq: number,
  ackTimeNs: number,
  deliveries: number,
  domain: string | undefined,
): object {
  return withDomain(
    { ...typed(`${METRIC_SCHEMA}consumer_ack`), stream, consumer, consumer_seq: consumerSeq, stream_seq: streamSeq, ack_time: ackTimeNs, deliveries },
    domain,
  );
}

/**
 * The advisory's kind for metrics: the subject without `$JS.EVENT.ADVISORY.` and without its stream/consumer
 * tokens (`STREAM.LEADER_ELECTED`, `CONSUMER.MAX_DELIVERIES`, `API`), metric events as `METRIC.CONSUMER.ACK`.
 */
export function advisoryKindOf(subject: string): string {
  const t = subject.split('.');
  if (t[2] === 'ADVISORY') return t[3] === 'API' ? 'API' : `${t[3] ?? ''}.${t[4] ?? ''}`;
  if (t[2] === 'METRIC') return `METRIC.${t[3] ?? ''}.${t[4] ?? ''}`;
  return 'OTHER';
}

/** `sample_freq` ("30", "30%") as a percentage; 0 when absent. nats-server samples every ack at 100 or more. */
export function samplePercentOf(sampleFreq: string | undefined): number {
  if (!sampleFreq) return 0;
  const n = Number(sampleFreq.replace(/%$/, ''));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** Whether this ack is sampled: always at >= 100%, else with probability (as nats-server's rand.Int31n(100) <= freq). */
export function ackSampled(percent: number): boolean {
  if (percent <= 0) return false;
  if (percent >= 100) return true;
  return Math.floor(Math.random() * 100) <= percent;
}
