// The `$JS.API` endpoints on one server, through the real `nats` client: a DIRECT.GET with nothing to look up
// answers `408 Empty Request` (also checked with E2E_SERVER=nats-server), and every endpoint Flotilla does
// not implement gets exactly one error answer naming it, instead of the client's timeout.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { allRawReplies, type ReplyWait } from './helpers/api-replies.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const T = 'io.nats.jetstream.api.v1.';
const enc = new TextEncoder();
const dec = new TextDecoder();
/** One server: its answer comes fast; a second one would too. */
const SINGLE_NODE_WAIT: ReplyWait = { firstMs: 3_000, extraMs: 300 };

let js: JetStreamServer;

beforeAll(async () => {
  js = await startJetStreamServer('flotilla-endpoints-');
  await js.jsm.streams.add({ name: 'S', subjects: ['s.>'], allow_direct: true });
  await js.js.publish('s.a', enc.encode('one'));
});

afterAll(async () => {
  await js?.stop();
});


/** Every reply to one request: waits up to `firstMs` for one, then `extraMs` more for any second. */

describe('DIRECT.GET request bodies, as nats-server', () => {
  it.each([
    ['{}', 'Empty Request'],
    ['', 'Empty Request'],
    ['null', 'Empty Request'],
    ['{"seq":0}', 'Empty Request'],
    [' ', 'Malformed Request'],
    ['[]', 'Malformed Request'],
    ['{"seq":1,"last_by_subj":"s.a"}', 'Bad Request'],
  ])('%j answers 408 %s', async (body, description) => {
    const replies = await allRawReplies(js.nc, '$JS.API.DIRECT.GET.S', body, SINGLE_NODE_WAIT);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.headers?.code).toBe(408);
    expect(replies[0]!.headers?.description).toBe(description);
    expect(replies[0]!.body).toBe('');
  });

  it('still finds a message by sequence', async () => {
    const m = await js.nc.request('$JS.API.DIRECT.GET.S', enc.encode('{"seq":1}'), { timeout: 2000 });
    expect(m.headers?.get('Nats-Sequence')).toBe('1');
    expect(dec.decode(m.data)).toBe('one');
  });
});

/** subject, response type (after `v1.`), the error of one node. */
const NOT_SERVED: Array<[string, string, { code: number; err_code: number; description: string }]> = [
  ['$JS.API.ACCOUNT.PURGE.A', 'account_purge_response', notImplemented('ACCOUNT.PURGE')],
  ['$JS.API.STREAM.TEMPLATE.CREATE.T', 'stream_template_create_response', notImplemented('STREAM.TEMPLATE.CREATE')],
  ['$JS.API.STREAM.TEMPLATE.NAMES', 'stream_template_names_response', notImplemented('STREAM.TEMPLATE.NAMES')],
  ['$JS.API.STREAM.TEMPLATE.INFO.T', 'stream_template_info_response', notImplemented('STREAM.TEMPLATE.INFO')],
  ['$JS.API.STREAM.TEMPLATE.DELETE.T', 'stream_template_delete_response', notImplemented('STREAM.TEMPLATE.DELETE')],
  // nats-server serves these only in a cluster.
  ['$JS.API.SERVER.REMOVE', 'meta_server_remove_response', clusteringRequired()],
  ['$JS.API.ACCOUNT.STREAM.MOVE.A.S', 'stream_update_response', clusteringRequired()],
  ['$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S', 'stream_update_response', clusteringRequired()],
];

function notImplemented(operation: string): { code: number; err_code: number; description: string } {
  return { code: 500, err_code: 10051, description: `${operation} is not implemented by flotilla` };
}

function clusteringRequired(): { code: number; err_code: number; description: string } {
  return { code: 503, err_code: 10010, description: 'JetStream clustering support required' };
}

// nats-server serves these (2.9.10 snapshots, restores and purges an account): Flotilla's answers.
describe.skipIf(AGAINST_NATS_SERVER)('endpoints Flotilla does not implement', () => {
  it.each(NOT_SERVED)('%s gets exactly one error answer', async (subject, type, error) => {
    const replies = await allRawReplies(js.nc, subject, '{}', SINGLE_NODE_WAIT);
    expect(replies).toHaveLength(1);
    expect(JSON.parse(replies[0]!.body)).toEqual({ type: `${T}${type}`, error });
  });

  it('counts them as API requests and errors', async () => {
    const before = await js.jsm.getAccountInfo();
    await allRawReplies(js.nc, '$JS.API.STREAM.SNAPSHOT.S', '{}', { firstMs: 3_000, extraMs: 0 });
    const after = await js.jsm.getAccountInfo();
    // The second INFO counts itself too.
    expect(after.api.total - before.api.total).toBe(2);
    expect(after.api.errors - before.api.errors).toBe(1);
  });
});
