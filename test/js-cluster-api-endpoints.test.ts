// The `$JS.API` endpoints on a three-node cluster, through the real `nats` client: a (stream or consumer)
// step-down on a stream the catalogue does not hold answers 404 10059 once (as nats-server's meta leader; also checked with
// E2E_SERVER=nats-server), and every endpoint Flotilla does not implement gets exactly one error answer
// naming it, from whichever node the client is connected to.
import { describe, it, expect } from 'vitest';
import { headers, type NatsConnection } from 'nats';
import { AGAINST_NATS_SERVER, JsCluster, addStream, useJsCluster } from './helpers/js-cluster.js';
import { allReplies } from './helpers/api-replies.js';

const T = 'io.nats.jetstream.api.v1.';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'ENDPOINTS' }, (c) => (cluster = c));

/** Every reply to one request: waits up to `firstMs` for one, then `extraMs` more for any second (there must be none). */

describe('STREAM.LEADER.STEPDOWN of a stream the cluster does not hold', () => {
  it('answers 404 10059 stream not found, once, through every node', async () => {
    for (const node of ['n1', 'n2', 'n3']) {
      const nc = await cluster.connect(node);
      const replies = await allReplies(nc, '$JS.API.STREAM.LEADER.STEPDOWN.MISSING', '');
      expect(replies, node).toEqual([{ type: `${T}stream_leader_stepdown_response`, error: { code: 404, err_code: 10059, description: 'stream not found' } }]);
    }
  });

  it('and CONSUMER.LEADER.STEPDOWN of a consumer of such a stream too', async () => {
    for (const node of ['n1', 'n2', 'n3']) {
      const nc = await cluster.connect(node);
      const replies = await allReplies(nc, '$JS.API.CONSUMER.LEADER.STEPDOWN.MISSING.C', '');
      expect(replies, node).toEqual([{ type: `${T}consumer_leader_stepdown_response`, error: { code: 404, err_code: 10059, description: 'stream not found' } }]);
    }
  });
});

const NOT_IMPLEMENTED: Array<[string, string, string]> = [
  ['$JS.API.STREAM.TEMPLATE.CREATE.T', 'STREAM.TEMPLATE.CREATE', 'stream_template_create_response'],
  ['$JS.API.STREAM.TEMPLATE.NAMES', 'STREAM.TEMPLATE.NAMES', 'stream_template_names_response'],
  ['$JS.API.STREAM.TEMPLATE.INFO.T', 'STREAM.TEMPLATE.INFO', 'stream_template_info_response'],
  ['$JS.API.STREAM.TEMPLATE.DELETE.T', 'STREAM.TEMPLATE.DELETE', 'stream_template_delete_response'],
];

// nats-server serves these (or, from a non-system account, stays silent): Flotilla's answers.
describe.skipIf(AGAINST_NATS_SERVER)('endpoints Flotilla does not implement, on a cluster', () => {
  it('answers each exactly once, with the error naming it, through every node', async () => {
    const admin = await cluster.connect('n1');
    await addStream(await admin.jetstreamManager(), { name: 'R3', subjects: ['r3.>'], num_replicas: 3 });
    for (const node of ['n1', 'n2', 'n3']) {
      const nc = await cluster.connect(node);
      const answers = await Promise.all(NOT_IMPLEMENTED.map(([subject]) => allReplies(nc, subject, '{}')));
      NOT_IMPLEMENTED.forEach(([subject, operation, type], i) => {
        expect(answers[i], `${subject} through ${node}`).toEqual([
          { type: `${T}${type}`, error: { code: 500, err_code: 10051, description: `${operation} is not implemented by flotilla` } },
        ]);
      });
    }
  });
});

/** Every reply to a request carrying a `Nats-Required-Api-Level` header. */
function allRepliesAtLevel(nc: NatsConnection, subject: string, level: string): Promise<Array<Record<string, unknown>>> {
  const h = headers();
  h.set('Nats-Required-Api-Level', level);
  return allReplies(nc, subject, '', { headers: h });
}

// nats-server 2.9.10 predates API levels (it serves these requests): Flotilla's 2.14 answer.
describe.skipIf(AGAINST_NATS_SERVER)('Nats-Required-Api-Level above Flotilla\'s, on a cluster', () => {
  it('a catalogue, a stream and a step-down request each get one 412 10185 answer, through every node', async () => {
    const admin = await cluster.connect('n1');
    await addStream(await admin.jetstreamManager(), { name: 'LVL', subjects: ['lvl.>'], num_replicas: 3 });
    const level = { code: 412, err_code: 10185, description: 'JetStream minimum api level required' };
    for (const node of ['n1', 'n2', 'n3']) {
      const nc = await cluster.connect(node);
      const names = await allRepliesAtLevel(nc, '$JS.API.STREAM.NAMES', '99');
      expect(names.length, `STREAM.NAMES through ${node}`).toBe(1);
      expect(names[0], node).toMatchObject({ type: `${T}stream_names_response`, error: level });
      const info = await allRepliesAtLevel(nc, '$JS.API.STREAM.INFO.LVL', '99');
      expect(info.length, `STREAM.INFO through ${node}`).toBe(1);
      expect(info[0], node).toMatchObject({ type: `${T}stream_info_response`, error: level });
      const meta = await allRepliesAtLevel(nc, '$JS.API.META.LEADER.STEPDOWN', '99');
      expect(meta, `META.LEADER.STEPDOWN through ${node}`).toEqual([{ type: `${T}meta_leader_stepdown_response`, error: level }]);
    }
  });
});

// Placement is honoured in a cluster, never ignored (tags placement itself: js-cluster-placement-tags.test.ts).
describe.skipIf(AGAINST_NATS_SERVER)('stream placement on a cluster', () => {
  it('tags no node has fit nowhere, another cluster has no suitable peers, this cluster is accepted', async () => {
    const jsm = await (await cluster.connect('n2')).jetstreamManager();
    const tagged = await allReplies(await cluster.connect('n2'), '$JS.API.STREAM.CREATE.TAGGED', JSON.stringify({ name: 'TAGGED', subjects: ['tagged'], placement: { tags: ['ssd'] } }));
    expect(tagged).toEqual([
      { type: `${T}stream_create_response`, error: { code: 400, err_code: 10005, description: "no suitable peers for placement, tags not matched ['ssd']" } },
    ]);
    const elsewhere = await allReplies(await cluster.connect('n2'), '$JS.API.STREAM.CREATE.ELSEWHERE', JSON.stringify({ name: 'ELSEWHERE', subjects: ['elsewhere'], placement: { cluster: 'OTHER' } }));
    expect(elsewhere).toEqual([
      { type: `${T}stream_create_response`, error: { code: 400, err_code: 10005, description: 'no suitable peers for placement' } },
    ]);
    const here = await addStream(jsm, { name: 'HERE', subjects: ['here'], placement: { cluster: 'ENDPOINTS' } });
    expect(here.config.placement?.cluster).toBe('ENDPOINTS');
  });
});
