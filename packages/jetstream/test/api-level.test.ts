import { describe, it, expect } from 'vitest';
import {
  ADVERTISED_NATS_VERSION,
  JS_API_LEVEL,
  dynamicMetadata,
  requiredConsumerLevel,
  requiredStreamLevel,
  staticMetadata,
  withLevelOf,
} from '../src/api/api-level.js';
import { normaliseStreamConfig, parseStreamConfigRequest, sameStreamConfig } from '../src/stream/stream-config.js';

const normalise = (body: object) => normaliseStreamConfig(parseStreamConfigRequest(body));

describe('required API level of a stream (2.14 setStaticStreamMetadata)', () => {
  it.each([
    ['plain', {}, 0],
    ['allow_msg_ttl', { allow_msg_ttl: true }, 1],
    ['subject_delete_marker_ttl', { subject_delete_marker_ttl: 1_000_000_000 }, 1],
    ['allow_msg_counter', { allow_msg_counter: true }, 2],
    ['allow_atomic', { allow_atomic: true }, 2],
    ['allow_msg_schedules', { allow_msg_schedules: true }, 2],
    ['persist_mode async', { persist_mode: 'async' }, 2],
    ['persist_mode default', { persist_mode: 'default' }, 0],
    ['allow_batched', { allow_batched: true, allow_msg_ttl: true }, 4],
  ])('%s needs level %i', (_name, cfg, level) => {
    expect(requiredStreamLevel(cfg)).toBe(level);
  });

  it('a created config stores the level, replacing the client\'s, and drops the dynamic keys', () => {
    const cfg = normalise({ name: 'A', allow_msg_ttl: true, metadata: { k: 'v', '_nats.ver': '9.9.9', '_nats.level': '9', '_nats.req.level': '7' } });
    expect(cfg.metadata).toEqual({ k: 'v', '_nats.req.level': '1' });
  });

  it('"same config" ignores a level stored differently and the dynamic keys of an info answer', () => {
    const stored = normalise({ name: 'A' });
    const { metadata: _md, ...older } = stored; // a stream created before levels were stored
    expect(sameStreamConfig(older as typeof stored, normalise({ name: 'A' }))).toBe(true);
    const answered = { ...stored, metadata: dynamicMetadata(stored.metadata) };
    expect(sameStreamConfig(answered, normalise({ name: 'A' }))).toBe(true);
    expect(sameStreamConfig(stored, normalise({ name: 'A', metadata: { k: 'v' } }))).toBe(false);
  });
});

describe('required API level of a consumer (2.14 setStaticConsumerMetadata)', () => {
  it.each([
    ['plain', { ack_policy: 'explicit' }, 0],
    ['paused', { pause_until: '2099-01-01T00:00:00Z' }, 1],
    ['pause_until zero time', { pause_until: '0001-01-01T00:00:00Z' }, 0],
    ['priority_policy overflow', { priority_policy: 'overflow', priority_groups: ['g'] }, 1],
    ['priority_policy none', { priority_policy: 'none' }, 0],
    ['priority_timeout', { priority_timeout: 5 }, 1],
    ['ack_policy flow_control', { ack_policy: 'flow_control' }, 4],
  ])('%s needs level %i', (_name, cfg, level) => {
    expect(requiredConsumerLevel(cfg)).toBe(level);
  });
});

describe('server-set metadata', () => {
  it('static: the client\'s keys, minus _nats.ver / _nats.level, plus _nats.req.level', () => {
    expect(staticMetadata(undefined, 0)).toEqual({ '_nats.req.level': '0' });
    expect(staticMetadata({ a: '1', '_nats.ver': 'x', '_nats.level': 'y', '_nats.req.level': '3' }, 1)).toEqual({ a: '1', '_nats.req.level': '1' });
  });

  it('dynamic: adds this server\'s version and level', () => {
    expect(dynamicMetadata({ '_nats.req.level': '0' })).toEqual({
      '_nats.req.level': '0',
      '_nats.ver': ADVERTISED_NATS_VERSION,
      '_nats.level': String(JS_API_LEVEL),
    });
  });

  it('withLevelOf copies the previous level, or removes it (copy*Metadata)', () => {
    expect(withLevelOf({ metadata: { a: '1', '_nats.req.level': '1' } }, { metadata: { '_nats.req.level': '0' } })).toEqual({ metadata: { a: '1', '_nats.req.level': '0' } });
    expect(withLevelOf({ metadata: { '_nats.req.level': '1', '_nats.ver': 'v' } }, {})).toEqual({});
  });
});
