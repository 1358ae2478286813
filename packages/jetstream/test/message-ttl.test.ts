// The Nats-TTL value as nats-server 2.14.5 reads it (getMessageTTL / parseMessageTTL with Go's
// time.ParseDuration and its parseInt64), the header lookup (getHeader: exact case, first, leading spaces),
// the raised TTL of a marker stream, the marker's header bytes (handleRemovalOrSdm) and the config rules
// (checkStreamCfg, the update check).
import { describe, expect, it } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { markerHeader, isDeleteMarker } from '../src/stream/delete-markers.js';
import { messageTtlConfig } from '../src/stream/message-ttl-config.js';
import { messageTtlNs, parseGoDurationNs, parseMessageTtl, raiseTtlHeader, ttlHeaderValue } from '../src/stream/message-ttl.js';
import { checkStreamUpdate, normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';

describe("Go's time.ParseDuration", () => {
  it.each([
    ['0', 0n],
    ['+0', 0n],
    ['1s', 1_000_000_000n],
    ['1.5s', 1_500_000_000n],
    ['1m30s', 90_000_000_000n],
    ['2h', 7_200_000_000_000n],
    ['500ms', 500_000_000n],
    ['-5s', -5_000_000_000n],
    ['.5h', 1_800_000_000_000n],
    ['1µs', 1_000n],
    ['3ns', 3n],
  ])('%s = %s ns', (text, ns) => {
    expect(parseGoDurationNs(text)).toBe(ns);
  });

  it.each(['', '5', '1.5', 's', '5 s', '1d', '.s', '1s ', '-'])('%j is an error', (text) => {
    expect(parseGoDurationNs(text)).toBeNull();
  });
});

describe('parseMessageTTL', () => {
  it.each([
    ['1s', 1],
    ['1.9s', 1],
    ['1m30s', 90],
    ['90', 90],
    ['00', 0],
    ['never', -1],
    ['Never', -1],
    ['0', 'invalid'],
    ['999ms', 'invalid'],
    ['-1s', 'invalid'],
    ['-1', 'invalid'],
    ['1.5', 'invalid'],
    ['soon', 'invalid'],
  ] as const)('%j → %s', (value, expected) => {
    expect(parseMessageTtl(value)).toBe(expected);
  });

  it('the header is found as getHeader finds it; the store reader gives ns, -1n for never, 0n otherwise', () => {
    const h = (entries: Array<[string, string]>) => encodeHeaders({ entries });
    expect(ttlHeaderValue(h([['Nats-Msg-Id', 'x'], ['Nats-TTL', '5s'], ['Nats-TTL', '9s']]))).toBe('5s');
    expect(ttlHeaderValue(h([['nats-ttl', '5s']]))).toBeUndefined();
    expect(ttlHeaderValue(h([['X-Nats-TTL', '5s']]))).toBeUndefined();
    expect(ttlHeaderValue(Buffer.from('NATS/1.0\r\nNats-TTL:    7\r\n\r\n'))).toBe('7');
    expect(messageTtlNs(h([['Nats-TTL', '2s']]))).toBe(2_000_000_000n);
    expect(messageTtlNs(h([['Nats-TTL', 'never']]))).toBe(-1n);
    expect(messageTtlNs(h([['Nats-TTL', 'soon']]))).toBe(0n);
    expect(messageTtlNs(h([['Other', '1']]))).toBe(0n);
  });
});

describe('a TTL below the delete-marker TTL', () => {
  const hdr = encodeHeaders({ entries: [['Nats-TTL', '5s'], ['Other', 'y']] });

  it('is raised to the marker TTL in whole seconds, moved to the end of the block', () => {
    expect(raiseTtlHeader(hdr, 5, 60_000_000_000, -1)?.toString()).toBe('NATS/1.0\r\nOther: y\r\nNats-TTL: 60\r\n\r\n');
  });

  it('stays with max_msgs_per_subject 1, at or above the marker TTL, and for never', () => {
    expect(raiseTtlHeader(hdr, 5, 60_000_000_000, 1)).toBeNull();
    expect(raiseTtlHeader(hdr, 60, 60_000_000_000, -1)).toBeNull();
    expect(raiseTtlHeader(hdr, -1, 60_000_000_000, -1)).toBeNull();
  });
});

describe('delete markers', () => {
  it("carry nats-server's header block: reason, the marker TTL as a Go duration, a subject roll-up", () => {
    expect(markerHeader('MaxAge', 1_000_000_000).toString()).toBe('NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\nNats-Rollup: sub\r\n\r\n');
    expect(markerHeader('MaxAge', 90_500_000_000).toString()).toContain('Nats-TTL: 1m30s\r\n');
    expect(markerHeader('MaxAge', 3_600_000_000_000).toString()).toContain('Nats-TTL: 1h0m0s\r\n');
    expect(isDeleteMarker(markerHeader('MaxAge', 1_000_000_000))).toBe(true);
    expect(isDeleteMarker(encodeHeaders({ entries: [['KV-Operation', 'PURGE']] }))).toBe(false);
  });
});

describe('config rules', () => {
  const cfg = (o: Record<string, unknown>) => normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', ...o }));
  const err = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return (e as { toJSON(): unknown }).toJSON();
    }
    throw new Error('expected an error');
  };
  const invalid = (description: string) => ({ code: 500, err_code: 10052, description });

  it('allow_msg_ttl is kept; a marker TTL turns it and roll-ups on, deny_purge off', () => {
    expect(cfg({ allow_msg_ttl: true }).allow_msg_ttl).toBe(true);
    const m = cfg({ subject_delete_marker_ttl: 1_000_000_000, deny_purge: true });
    expect([m.allow_msg_ttl, m.allow_rollup_hdrs, m.deny_purge, m.subject_delete_marker_ttl]).toEqual([true, true, false, 1_000_000_000]);
    // Absent when off, so plain streams' configs stay as they were.
    expect('allow_msg_ttl' in cfg({})).toBe(false);
    expect('subject_delete_marker_ttl' in cfg({})).toBe(false);
  });

  it('refuses marker TTLs below 1s or negative, and markers on a mirror', () => {
    expect(err(() => cfg({ subject_delete_marker_ttl: 999_999_999 }))).toEqual(invalid('subject delete marker TTL must be at least 1 second'));
    expect(err(() => cfg({ subject_delete_marker_ttl: -1 }))).toEqual(invalid('subject delete marker TTL must not be negative'));
    expect(err(() => messageTtlConfig({ subject_delete_marker_ttl: 1_000_000_000, mirror: { name: 'O' } }))).toEqual(
      invalid('subject delete markers forbidden on mirrors'),
    );
  });

  it('an update may turn allow_msg_ttl on, never off', () => {
    const plain = cfg({});
    const ttl = cfg({ allow_msg_ttl: true });
    expect(checkStreamUpdate(plain, ttl).allow_msg_ttl).toBe(true);
    expect(err(() => checkStreamUpdate(ttl, plain))).toEqual(invalid('message TTL status can not be disabled'));
  });
});
