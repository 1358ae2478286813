// The advisory building blocks on their own: the API audit trail's pairing and its bound, the kind metrics
// count advisories by, and the ack sampling percentage (nats-server's sample_freq parsing and draw).
import { describe, it, expect } from 'vitest';
import { ApiAuditTrail, MAX_OPEN_REQUESTS } from '../src/advisories/api-audit-trail.js';
import { ackSampled, advisoryKindOf, samplePercentOf } from '../src/advisories/jetstream-events.js';
import { FakeBus } from './support/fake-bus.js';

const audits = (bus: FakeBus): Array<Record<string, unknown>> =>
  bus.published.filter((m) => m.subject === '$JS.EVENT.ADVISORY.API').map((m) => JSON.parse(m.data.toString()) as Record<string, unknown>);

describe('ApiAuditTrail', () => {
  it('audits an answered request once, with its subject, request and response', () => {
    const bus = new FakeBus();
    bus.subscribe('$JS.EVENT.ADVISORY.API', () => undefined);
    const trail = new ApiAuditTrail(bus, 'n1', () => 'hub');
    trail.requested('$JS.API.STREAM.INFO.S', '_INBOX.1', Buffer.from('{"x":1}'));
    trail.answered('_INBOX.1', '{"type":"t"}');
    trail.answered('_INBOX.1', '{"type":"again"}');
    const got = audits(bus);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.api_audit', server: 'n1', client: null, subject: '$JS.API.STREAM.INFO.S', request: '{"x":1}', response: '{"type":"t"}', domain: 'hub' });
    expect(Object.keys(got[0]!)).toEqual(['type', 'id', 'timestamp', 'server', 'client', 'subject', 'request', 'response', 'domain']);
  });

  it('notes nothing while nobody listens, and keeps at most MAX_OPEN_REQUESTS unanswered', () => {
    const bus = new FakeBus();
    const trail = new ApiAuditTrail(bus, 'n1', () => undefined);
    trail.requested('$JS.API.INFO', '_INBOX.quiet', Buffer.alloc(0));
    bus.subscribe('$JS.EVENT.ADVISORY.API', () => undefined);
    trail.answered('_INBOX.quiet', '{}');
    expect(audits(bus)).toHaveLength(0);
    for (let i = 0; i <= MAX_OPEN_REQUESTS; i++) trail.requested('$JS.API.INFO', `_INBOX.${i}`, Buffer.alloc(0));
    trail.answered('_INBOX.0', '{}'); // the oldest was forgotten
    trail.answered(`_INBOX.${MAX_OPEN_REQUESTS}`, '{}');
    const got = audits(bus);
    expect(got).toHaveLength(1);
    expect(got[0]!['request']).toBeUndefined();
    expect(got[0]!['domain']).toBeUndefined();
  });
});

describe('advisory kinds and ack sampling', () => {
  it('names the kind without the stream and consumer tokens', () => {
    expect(advisoryKindOf('$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.ORDERS')).toBe('STREAM.LEADER_ELECTED');
    expect(advisoryKindOf('$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ORDERS.worker')).toBe('CONSUMER.MAX_DELIVERIES');
    expect(advisoryKindOf('$JS.EVENT.ADVISORY.API')).toBe('API');
    expect(advisoryKindOf('$JS.EVENT.METRIC.CONSUMER.ACK.ORDERS.worker')).toBe('METRIC.CONSUMER.ACK');
    expect(advisoryKindOf('$JS.EVENT.SOMETHING')).toBe('OTHER');
  });

  it('reads sample_freq as nats-server and samples every ack at 100%, none at 0', () => {
    expect(samplePercentOf(undefined)).toBe(0);
    expect(samplePercentOf('30%')).toBe(30);
    expect(samplePercentOf('100')).toBe(100);
    expect(Array.from({ length: 50 }, () => ackSampled(100)).every(Boolean)).toBe(true);
    expect(Array.from({ length: 50 }, () => ackSampled(0)).some(Boolean)).toBe(false);
  });
});
