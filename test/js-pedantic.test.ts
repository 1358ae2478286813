// Pedantic mode (nats-server 2.11+): a stream create/update request's `pedantic: true` (checkStreamCfg) and a
// consumer create request's (setConsumerConfigDefaults): what the defaults would adjust is refused — 400 10157
// `pedantic mode: …`, or 10052 for delete markers — and a config needing no adjustment is created as without
// it. Raw requests (the stock clients have no pedantic switch), one node and three. nats-server 2.9.10 ignores
// the field, so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { NatsConnection as V2Connection } from 'nats';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamV3Server } from './helpers/jetstream-v3-server.js';
import { AGAINST_NATS_SERVER, addStream, useJsCluster, type JsCluster } from './helpers/js-cluster.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const SEC_NS = 1_000_000_000;

type Requester = Pick<NatsConnection, 'request'> | Pick<V2Connection, 'request'>;

async function create(nc: Requester, stream: string, name: string, config: object, pedantic?: unknown): Promise<Record<string, unknown>> {
  const body = { stream_name: stream, config: { durable_name: name, ...config }, ...(pedantic !== undefined ? { pedantic } : {}) };
  const m = await (nc as Pick<NatsConnection, 'request'>).request(`$JS.API.CONSUMER.CREATE.${stream}.${name}`, enc.encode(JSON.stringify(body)), { timeout: 10_000 });
  return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
}

const refusal = (reason: string) => ({ code: 400, err_code: 10157, description: `pedantic mode: ${reason}` });

describe.skipIf(AGAINST_NATS_SERVER)('consumer pedantic mode on one node', () => {
  const srv = new JetStreamV3Server('flotilla-pedantic-');
  let nc: NatsConnection;
  beforeAll(async () => {
    const c = await srv.start();
    nc = c.nc;
    await c.jsm.streams.add({ name: 'P', subjects: ['p.>'] });
    await c.jsm.streams.add({ name: 'L', subjects: ['l.>'], consumer_limits: { max_ack_pending: 50, inactive_threshold: 60 * SEC_NS } });
  });
  afterAll(async () => {
    expect(await srv.remove()).toBe(0);
  });

  async function createStream(config: object): Promise<Record<string, unknown>> {
    const m = await nc.request(`$JS.API.STREAM.CREATE.${(config as { name: string }).name}`, enc.encode(JSON.stringify(config)), { timeout: 10_000 });
    return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
  }

  it.each([
    ['max_msgs below -1', { max_msgs: -2 }, refusal('max_msgs must be set to -1')],
    ['max_msgs_per_subject below -1', { max_msgs_per_subject: -5 }, refusal('max_msgs_per_subject must be set to -1')],
    ['max_bytes below -1', { max_bytes: -2 }, refusal('max_bytes must be set to -1')],
    ['max_msg_size below -1', { max_msg_size: -2 }, refusal('max_msg_size must be set to -1')],
    ['max_consumers below -1', { max_consumers: -2 }, refusal('max_consumers must be set to -1')],
    ['a default window over max_age', { max_age: 60 * SEC_NS }, refusal('duplicate window cannot be bigger than max age')],
    ['markers without TTLs', { subject_delete_marker_ttl: 5 * SEC_NS, allow_rollup_hdrs: true }, { code: 500, err_code: 10052, description: 'subject delete marker cannot be set if message TTLs are disabled' }],
    ['markers without roll-ups', { subject_delete_marker_ttl: 5 * SEC_NS, allow_msg_ttl: true }, { code: 500, err_code: 10052, description: 'subject delete marker cannot be set if roll-ups are disabled' }],
  ])('a pedantic stream create with %s is refused', async (_name, extra, error) => {
    const answer = await createStream({ name: 'PS', subjects: ['ps.>'], pedantic: true, ...extra });
    expect(answer).toEqual({ type: 'io.nats.jetstream.api.v1.stream_create_response', error });
  });

  it('a pedantic stream create needing no adjustment is created; so is the adjusted one without pedantic', async () => {
    const ok = await createStream({ name: 'PS1', subjects: ['ps1.>'], pedantic: true, max_age: 60 * SEC_NS, duplicate_window: 30 * SEC_NS, subject_delete_marker_ttl: 5 * SEC_NS, allow_msg_ttl: true, allow_rollup_hdrs: true });
    expect(ok['error']).toBeUndefined();
    expect(ok['config']).toMatchObject({ duplicate_window: 30 * SEC_NS, subject_delete_marker_ttl: 5 * SEC_NS });
    const lax = await createStream({ name: 'PS2', subjects: ['ps2.>'], max_age: 60 * SEC_NS, subject_delete_marker_ttl: 5 * SEC_NS });
    expect(lax['config']).toMatchObject({ duplicate_window: 60 * SEC_NS, allow_msg_ttl: true, allow_rollup_hdrs: true });
    // An update is checked too; a mirror must not differ from its origin's direct get setting.
    const m = await nc.request('$JS.API.STREAM.UPDATE.PS1', enc.encode(JSON.stringify({ ...(ok['config'] as object), max_msgs: -3, pedantic: true })), { timeout: 10_000 });
    expect(JSON.parse(dec.decode(m.data))['error']).toEqual(refusal('max_msgs must be set to -1'));
    await createStream({ name: 'ORIGIN', subjects: ['origin.>'], allow_direct: true });
    expect((await createStream({ name: 'MIR', mirror: { name: 'ORIGIN' }, pedantic: true }))['error']).toEqual(refusal('origin stream has direct get set, mirror has it disabled'));
    expect((await createStream({ name: 'MIR', mirror: { name: 'ORIGIN' }, mirror_direct: true, pedantic: true }))['error']).toBeUndefined();
    expect((await createStream({ name: 'PS3', pedantic: 'yes' }))['error']).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON' });
  });

  it.each([
    ['max_deliver below -1', { max_deliver: -2 }, 'max_deliver must be set to -1'],
    ['negative max_waiting', { max_waiting: -1 }, 'max_waiting must not be negative'],
    ['max_ack_pending below -1', { ack_policy: 'explicit', max_ack_pending: -2 }, 'max_ack_pending must be set to -1'],
    ['negative max_batch', { max_batch: -1 }, 'max_batch must not be negative'],
    ['negative max_expires', { max_expires: -1 }, 'max_expires must not be negative'],
    ['negative max_bytes', { max_bytes: -1 }, 'max_bytes must not be negative'],
    ['negative idle_heartbeat', { idle_heartbeat: -1 }, 'idle_heartbeat must not be negative'],
    ['negative inactive_threshold', { inactive_threshold: -1 }, 'inactive_threshold must not be negative'],
    ['backoff not starting at the ack wait', { ack_policy: 'explicit', max_deliver: 5, backoff: [2 * SEC_NS, 4 * SEC_NS] }, 'first backoff value has to equal batch AckWait'],
  ])('%s is refused', async (_name, config, reason) => {
    const answer = await create(nc, 'P', 'BAD', config, true);
    expect(answer).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_create_response', error: refusal(reason) });
  });

  it('a consumer without limits the stream sets is refused; with them it is created', async () => {
    expect((await create(nc, 'L', 'NOMAX', { ack_policy: 'explicit', inactive_threshold: 60 * SEC_NS }, true))['error'])
      .toEqual(refusal("max_ack_pending must be set if it's configured in stream limits"));
    expect((await create(nc, 'L', 'NOINACT', { ack_policy: 'explicit', max_ack_pending: 50 }, true))['error'])
      .toEqual(refusal("inactive_threshold must be set if it's configured in stream limits"));
    const ok = await create(nc, 'L', 'OK', { ack_policy: 'explicit', max_ack_pending: 50, inactive_threshold: 60 * SEC_NS }, true);
    expect(ok['error']).toBeUndefined();
    expect(ok['config']).toMatchObject({ max_ack_pending: 50, inactive_threshold: 60 * SEC_NS });
  });

  it('without pedantic (or with false) the same config is adjusted, not refused; a non-boolean is invalid JSON', async () => {
    const adjusted = await create(nc, 'P', 'LAX', { ack_policy: 'explicit', max_deliver: 5, backoff: [2 * SEC_NS, 4 * SEC_NS] }, false);
    expect(adjusted['error']).toBeUndefined();
    expect((adjusted['config'] as { ack_wait: number }).ack_wait).toBe(2 * SEC_NS);
    const matching = await create(nc, 'P', 'EXACT', { ack_policy: 'explicit', ack_wait: 2 * SEC_NS, max_deliver: 5, backoff: [2 * SEC_NS, 4 * SEC_NS] }, true);
    expect(matching['error']).toBeUndefined();
    expect((await create(nc, 'P', 'TYPE', {}, 'yes'))['error']).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON' });
  });
});

describe.skipIf(AGAINST_NATS_SERVER)('consumer pedantic mode on three nodes', () => {
  let cluster: JsCluster;
  useJsCluster({ size: 3 }, (c) => (cluster = c));

  it('an R3 stream\'s consumer is refused through a follower as on one node, and created when nothing is adjusted', async () => {
    const n1 = await cluster.connect('n1');
    const n2 = await cluster.connect('n2');
    const refused = await n2.request('$JS.API.STREAM.CREATE.PRX', enc.encode(JSON.stringify({ name: 'PRX', subjects: ['prx.>'], num_replicas: 3, max_bytes: -7, pedantic: true })), { timeout: 10_000 });
    expect(JSON.parse(dec.decode(refused.data))['error']).toEqual(refusal('max_bytes must be set to -1'));
    await n2.close();
    await addStream(await n1.jetstreamManager(), { name: 'PR', subjects: ['pr.>'], num_replicas: 3, consumer_limits: { max_ack_pending: 20 } });
    for (const node of ['n2', 'n3']) {
      const nc = await cluster.connect(node);
      expect((await create(nc, 'PR', `C${node}`, { ack_policy: 'explicit' }, true))['error'], node)
        .toEqual(refusal("max_ack_pending must be set if it's configured in stream limits"));
      await nc.close();
    }
    const ok = await create(n1, 'PR', 'GOOD', { ack_policy: 'explicit', max_ack_pending: 20 }, true);
    expect(ok['error']).toBeUndefined();
    expect((ok['config'] as { max_ack_pending: number }).max_ack_pending).toBe(20);
    await n1.close();
  });
});
