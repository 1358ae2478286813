// The `$JS.API` endpoint table (src/api/api-endpoints.ts): every nats-server 2.14 subject (and 2.9's stream
// templates) resolves to its operation, scope, stream name and response type; nothing else resolves.
import { describe, it, expect } from 'vitest';
import {
  API_ENDPOINTS,
  API_OPERATION_LABELS,
  apiOperationOf,
  apiOperationOfResponseType,
  apiSuffixOf,
  endpointOf,
  endpointOfSuffix,
} from '../src/api/api-endpoints.js';
import { routeOf } from '../src/cluster/clustered-jetstream-routing.js';

const T = 'io.nats.jetstream.api.v1.';

/** nats-server 2.14.5 server/jetstream_api.go's request subjects (after `$JS.API.`), plus 2.9's templates. */
const NATS_SERVER_SUBJECTS = [
  'INFO',
  'STREAM.CREATE.*',
  'STREAM.UPDATE.*',
  'STREAM.NAMES',
  'STREAM.LIST',
  'STREAM.INFO.*',
  'STREAM.DELETE.*',
  'STREAM.PURGE.*',
  'STREAM.SNAPSHOT.*',
  'STREAM.RESTORE.*',
  'STREAM.MSG.DELETE.*',
  'STREAM.MSG.GET.*',
  'DIRECT.GET.*',
  'DIRECT.GET.*.>',
  'CONSUMER.CREATE.*',
  'CONSUMER.CREATE.*.>',
  'CONSUMER.DURABLE.CREATE.*.*',
  'CONSUMER.NAMES.*',
  'CONSUMER.LIST.*',
  'CONSUMER.INFO.*.*',
  'CONSUMER.DELETE.*.*',
  'CONSUMER.PAUSE.*.*',
  'CONSUMER.MSG.NEXT.*.*',
  'CONSUMER.RESET.*.*',
  'CONSUMER.UNPIN.*.*',
  'STREAM.PEER.REMOVE.*',
  'STREAM.LEADER.STEPDOWN.*',
  'CONSUMER.LEADER.STEPDOWN.*.*',
  'META.LEADER.STEPDOWN',
  'SERVER.REMOVE',
  'ACCOUNT.PURGE.*',
  'ACCOUNT.STREAM.MOVE.*.*',
  'ACCOUNT.STREAM.CANCEL_MOVE.*.*',
  'STREAM.TEMPLATE.CREATE.*',
  'STREAM.TEMPLATE.NAMES',
  'STREAM.TEMPLATE.INFO.*',
  'STREAM.TEMPLATE.DELETE.*',
];

/** subject after `$JS.API.` → operation, scope, stream name (from the subject), response type (after `v1.`), implemented. */
const EXPECTED: Array<[string, string, string, string | undefined, string, boolean]> = [
  ['INFO', 'INFO', 'catalogue', undefined, 'account_info_response', true],
  ['STREAM.CREATE.S', 'STREAM.CREATE', 'catalogue', undefined, 'stream_create_response', true],
  ['STREAM.UPDATE.S', 'STREAM.UPDATE', 'catalogue', undefined, 'stream_update_response', true],
  ['STREAM.DELETE.S', 'STREAM.DELETE', 'catalogue', undefined, 'stream_delete_response', true],
  ['STREAM.NAMES', 'STREAM.NAMES', 'catalogue', undefined, 'stream_names_response', true],
  ['STREAM.LIST', 'STREAM.LIST', 'catalogue', undefined, 'stream_list_response', true],
  ['STREAM.PEER.REMOVE.S', 'STREAM.PEER.REMOVE', 'catalogue', undefined, 'stream_remove_peer_response', true],
  ['META.LEADER.STEPDOWN', 'META.LEADER.STEPDOWN', 'catalogue', undefined, 'meta_leader_stepdown_response', true],
  ['SERVER.REMOVE', 'SERVER.REMOVE', 'catalogue', undefined, 'meta_server_remove_response', true],
  ['ACCOUNT.PURGE.A', 'ACCOUNT.PURGE', 'catalogue', undefined, 'account_purge_response', false],
  ['ACCOUNT.STREAM.MOVE.A.S', 'ACCOUNT.STREAM.MOVE', 'catalogue', undefined, 'stream_update_response', true],
  ['ACCOUNT.STREAM.CANCEL_MOVE.A.S', 'ACCOUNT.STREAM.CANCEL_MOVE', 'catalogue', undefined, 'stream_update_response', true],
  ['STREAM.TEMPLATE.CREATE.T', 'STREAM.TEMPLATE.CREATE', 'catalogue', undefined, 'stream_template_create_response', false],
  ['STREAM.TEMPLATE.NAMES', 'STREAM.TEMPLATE.NAMES', 'catalogue', undefined, 'stream_template_names_response', false],
  ['STREAM.TEMPLATE.INFO.T', 'STREAM.TEMPLATE.INFO', 'catalogue', undefined, 'stream_template_info_response', false],
  ['STREAM.TEMPLATE.DELETE.T', 'STREAM.TEMPLATE.DELETE', 'catalogue', undefined, 'stream_template_delete_response', false],
  ['STREAM.INFO.S', 'STREAM.INFO', 'stream', 'S', 'stream_info_response', true],
  ['STREAM.PURGE.S', 'STREAM.PURGE', 'stream', 'S', 'stream_purge_response', true],
  ['STREAM.MSG.GET.S', 'STREAM.MSG.GET', 'stream', 'S', 'stream_msg_get_response', true],
  ['STREAM.MSG.DELETE.S', 'STREAM.MSG.DELETE', 'stream', 'S', 'stream_msg_delete_response', true],
  ['STREAM.LEADER.STEPDOWN.S', 'STREAM.LEADER.STEPDOWN', 'stream', 'S', 'stream_leader_stepdown_response', true],
  ['STREAM.SNAPSHOT.S', 'STREAM.SNAPSHOT', 'stream', 'S', 'stream_snapshot_response', true],
  ['STREAM.RESTORE.S', 'STREAM.RESTORE', 'catalogue', undefined, 'stream_restore_response', true],
  ['DIRECT.GET.S', 'DIRECT.GET', 'stream', 'S', 'stream_msg_get_response', true],
  ['DIRECT.GET.S.$KV.b.k', 'DIRECT.GET', 'stream', 'S', 'stream_msg_get_response', true],
  ['CONSUMER.CREATE.S', 'CONSUMER.CREATE', 'consumer', 'S', 'consumer_create_response', true],
  ['CONSUMER.CREATE.S.C', 'CONSUMER.CREATE', 'consumer', 'S', 'consumer_create_response', true],
  ['CONSUMER.CREATE.S.C.orders.*.>', 'CONSUMER.CREATE', 'consumer', 'S', 'consumer_create_response', true],
  ['CONSUMER.DURABLE.CREATE.S.C', 'CONSUMER.DURABLE.CREATE', 'consumer', 'S', 'consumer_create_response', true],
  ['CONSUMER.INFO.S.C', 'CONSUMER.INFO', 'consumer', 'S', 'consumer_info_response', true],
  ['CONSUMER.DELETE.S.C', 'CONSUMER.DELETE', 'consumer', 'S', 'consumer_delete_response', true],
  ['CONSUMER.NAMES.S', 'CONSUMER.NAMES', 'consumer', 'S', 'consumer_names_response', true],
  ['CONSUMER.LIST.S', 'CONSUMER.LIST', 'consumer', 'S', 'consumer_list_response', true],
  ['CONSUMER.MSG.NEXT.S.C', 'CONSUMER.MSG.NEXT', 'consumer', 'S', 'consumer_getnext_response', true],
  ['CONSUMER.LEADER.STEPDOWN.S.C', 'CONSUMER.LEADER.STEPDOWN', 'consumer', 'S', 'consumer_leader_stepdown_response', true],
  ['CONSUMER.PAUSE.S.C', 'CONSUMER.PAUSE', 'consumer', 'S', 'consumer_pause_response', true],
  ['CONSUMER.UNPIN.S.C', 'CONSUMER.UNPIN', 'consumer', 'S', 'consumer_unpin_response', true],
  ['CONSUMER.RESET.S.C', 'CONSUMER.RESET', 'consumer', 'S', 'consumer_reset_response', true],
];

/** A subject the pattern matches: `*` → a name, `>` → two tokens. */
function sampleOf(pattern: string): string {
  return pattern
    .split('.')
    .map((t) => (t === '*' ? 'N' : t === '>' ? 'a.b' : t))
    .join('.');
}

describe('the $JS.API endpoint table', () => {
  it("holds nats-server's endpoints, each once", () => {
    expect(API_ENDPOINTS.map((e) => e.pattern).sort()).toEqual([...NATS_SERVER_SUBJECTS].sort());
  });

  it('has no two patterns matching one subject', () => {
    // endpointOfSuffix answers undefined when more than one pattern matches.
    for (const e of API_ENDPOINTS) expect(endpointOfSuffix(sampleOf(e.pattern))).toBe(e);
  });

  it('resolves each subject to its operation, scope, stream and response type', () => {
    expect(new Set(EXPECTED.map((x) => endpointOf(x[0].split('.'))))).toEqual(new Set(API_ENDPOINTS));
    for (const [suffix, operation, scope, streamName, type, implemented] of EXPECTED) {
      const t = suffix.split('.');
      const e = endpointOf(t);
      expect(e, suffix).toBeDefined();
      expect({ suffix, operation: e!.operation, scope: e!.scope, type: e!.responseType, implemented: e!.implemented }).toEqual({
        suffix,
        operation,
        scope,
        type: `${T}${type}`,
        implemented,
      });
      expect(e!.streamToken === undefined ? undefined : t[e!.streamToken], suffix).toBe(streamName);
      expect(apiOperationOf(`$JS.API.${suffix}`)).toBe(operation);
      expect(apiOperationOf(`$JS.hub.API.${suffix}`)).toBe(operation);
    }
  });

  it('resolves nothing else', () => {
    for (const suffix of ['NOPE', 'INFO.X', 'STREAM.INFO', 'STREAM.FOO.S', 'STREAM.NAMES.X', 'STREAM.CREATE.a.b', 'STREAM.MSG.PEEK.S', 'META.X', 'CONSUMER.INFO.S', 'CONSUMER.DURABLE.CREATE.S.C.x', 'CONSUMER.MSG.NEXT.S', 'DIRECT.GET', 'STREAM.TEMPLATE.INFO', 'STREAM..INFO']) {
      expect(endpointOfSuffix(suffix), suffix).toBeUndefined();
      expect(apiOperationOf(`$JS.API.${suffix}`)).toBe('OTHER');
    }
    expect(endpointOf([])).toBeUndefined();
    expect(apiOperationOf('$JS.API')).toBe('OTHER');
    expect(apiOperationOf('$JS.hub.APIX.INFO')).toBe('OTHER');
    expect(apiOperationOf('foo.INFO')).toBe('OTHER');
  });

  it('finds the part after $JS.API and $JS.<domain>.API', () => {
    expect(apiSuffixOf('$JS.API.STREAM.INFO.S')).toBe('STREAM.INFO.S');
    expect(apiSuffixOf('$JS.hub.API.STREAM.INFO.S')).toBe('STREAM.INFO.S');
    expect(apiSuffixOf('$JS.API')).toBeNull();
    expect(apiSuffixOf('$JS.EVENT.ADVISORY.X')).toBeNull();
  });

  it('gives the metrics one label per operation and maps each response type to its first endpoint', () => {
    expect([...API_OPERATION_LABELS].sort()).toEqual([...new Set([...EXPECTED.map((x) => x[1]), 'OTHER'])].sort());
    expect(apiOperationOfResponseType(`${T}consumer_create_response`)).toBe('CONSUMER.CREATE');
    expect(apiOperationOfResponseType(`${T}stream_update_response`)).toBe('STREAM.UPDATE');
    expect(apiOperationOfResponseType(`${T}stream_msg_get_response`)).toBe('STREAM.MSG.GET');
    expect(apiOperationOfResponseType(`${T}consumer_pause_response`)).toBe('CONSUMER.PAUSE');
    expect(apiOperationOfResponseType(`${T}stream_template_info_response`)).toBe('STREAM.TEMPLATE.INFO');
    expect(apiOperationOfResponseType(`${T}system_response`)).toBe('OTHER');
  });

  it('routes every endpoint Flotilla does not implement to the meta leader, whatever its scope', () => {
    for (const [suffix, , scope, streamName, type, implemented] of EXPECTED) {
      const r = routeOf(suffix.split('.'));
      if (!implemented || scope === 'catalogue') expect(r, suffix).toEqual({ kind: 'catalogue', type: `${T}${type}` });
      else expect(r, suffix).toMatchObject({ kind: 'stream', stream: streamName, type: `${T}${type}` });
    }
  });

  it('marks the endpoints a single node refuses with 10010 and those outside the API statistics', () => {
    expect(API_ENDPOINTS.filter((e) => e.clusterOnly === true).map((e) => e.operation)).toEqual([
      'STREAM.PEER.REMOVE',
      'SERVER.REMOVE',
      'ACCOUNT.STREAM.MOVE',
      'ACCOUNT.STREAM.CANCEL_MOVE',
      'STREAM.LEADER.STEPDOWN',
      'CONSUMER.LEADER.STEPDOWN',
    ]);
    expect(API_ENDPOINTS.filter((e) => e.outsideApiStats === true).map((e) => e.pattern)).toEqual(['DIRECT.GET.*', 'DIRECT.GET.*.>', 'CONSUMER.MSG.NEXT.*.*', 'CONSUMER.RESET.*.*']);
  });
});
