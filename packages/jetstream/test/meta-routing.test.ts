import { describe, it, expect } from 'vitest';
import { routeOf } from '../src/cluster/clustered-jetstream-routing.js';

const T = 'io.nats.jetstream.api.v1.';
const r = (subject: string) => routeOf(subject.split('.').slice(2));

describe('which node answers a $JS.API request', () => {
  it('sends catalogue calls to the meta leader', () => {
    expect(r('$JS.API.INFO')).toEqual({ kind: 'catalogue', type: `${T}account_info_response` });
    expect(r('$JS.API.STREAM.CREATE.S')).toEqual({ kind: 'catalogue', type: `${T}stream_create_response` });
    expect(r('$JS.API.STREAM.UPDATE.S')).toEqual({ kind: 'catalogue', type: `${T}stream_update_response` });
    expect(r('$JS.API.STREAM.DELETE.S')).toEqual({ kind: 'catalogue', type: `${T}stream_delete_response` });
    expect(r('$JS.API.STREAM.NAMES')).toEqual({ kind: 'catalogue', type: `${T}stream_names_response` });
    expect(r('$JS.API.STREAM.LIST')).toEqual({ kind: 'catalogue', type: `${T}stream_list_response` });
    expect(r('$JS.API.STREAM.PEER.REMOVE.S')).toEqual({ kind: 'catalogue', type: `${T}stream_remove_peer_response` });
    expect(r('$JS.API.META.LEADER.STEPDOWN')).toEqual({ kind: 'catalogue', type: `${T}meta_leader_stepdown_response` });
  });

  it('sends stream and consumer calls to the stream leader', () => {
    expect(r('$JS.API.STREAM.INFO.S')).toEqual({ kind: 'stream', stream: 'S', type: `${T}stream_info_response`, op: 'info' });
    expect(r('$JS.API.STREAM.PURGE.S')).toMatchObject({ kind: 'stream', stream: 'S', op: 'other' });
    expect(r('$JS.API.STREAM.MSG.GET.S')).toEqual({ kind: 'stream', stream: 'S', type: `${T}stream_msg_get_response`, op: 'other' });
    expect(r('$JS.API.STREAM.MSG.DELETE.S')).toEqual({ kind: 'stream', stream: 'S', type: `${T}stream_msg_delete_response`, op: 'other' });
    expect(r('$JS.API.STREAM.LEADER.STEPDOWN.S')).toMatchObject({ kind: 'stream', stream: 'S', op: 'stepdown' });
    expect(r('$JS.API.CONSUMER.CREATE.S')).toMatchObject({ kind: 'stream', stream: 'S', type: `${T}consumer_create_response` });
    expect(r('$JS.API.CONSUMER.CREATE.S.C.f.>')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.CONSUMER.DURABLE.CREATE.S.C')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.CONSUMER.INFO.S.C')).toMatchObject({ kind: 'stream', stream: 'S', type: `${T}consumer_info_response` });
    expect(r('$JS.API.CONSUMER.DELETE.S.C')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.CONSUMER.NAMES.S')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.CONSUMER.LIST.S')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.CONSUMER.MSG.NEXT.S.C')).toMatchObject({ kind: 'stream', stream: 'S', op: 'pull' });
    expect(r('$JS.API.CONSUMER.LEADER.STEPDOWN.S.C')).toMatchObject({ kind: 'stream', stream: 'S' });
    expect(r('$JS.API.DIRECT.GET.S')).toMatchObject({ kind: 'stream', stream: 'S', op: 'pull' });
    expect(r('$JS.API.DIRECT.GET.S.a.b')).toMatchObject({ kind: 'stream', stream: 'S', op: 'pull' });
  });

  it('leaves unknown subjects unanswered', () => {
    for (const s of ['$JS.API.NOPE', '$JS.API.INFO.X', '$JS.API.STREAM.FOO.S', '$JS.API.STREAM.NAMES.X', '$JS.API.META.X', '$JS.API.CONSUMER.INFO.S']) {
      expect(r(s)).toEqual({ kind: 'none' });
    }
  });
});
