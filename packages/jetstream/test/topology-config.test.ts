// The pure parts of mirrors and sources (src/topology/): config typing and checkStreamCfg's rules with
// nats-server 2.14's errors, the Nats-Stream-Source header format and its parse, subject transforms.
import { describe, it, expect } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { checkStreamUpdate, normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { apiPrefixHash, parseSourceHeader, readSourceHeader, sourceHeaderValue, sourcedHeader } from '../src/topology/source-header.js';
import { sourceIndexName } from '../src/topology/source-config.js';
import { compileTransform, transformSubject, type CompiledTransform } from '../src/topology/subject-transform.js';

function errorOf(body: unknown): { code: number; err_code: number; description: string } | null {
  try {
    normaliseStreamConfig(parseStreamConfigRequest(body));
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err.toJSON();
  }
}

describe('mirror and sources config', () => {
  it('a mirror or a sourcing stream gets no default subject; the blocks keep only what was set, in Go order', () => {
    const m = normaliseStreamConfig(parseStreamConfigRequest({ name: 'M', mirror: { name: 'O', opt_start_seq: 0, filter_subject: '' } }));
    expect(m.subjects).toEqual([]);
    expect(m.mirror).toEqual({ name: 'O' });
    expect(m.duplicate_window).toBe(0);
    const keys = Object.keys(m);
    expect(keys.indexOf('mirror')).toBeLessThan(keys.indexOf('compression'));
    const s = normaliseStreamConfig(
      parseStreamConfigRequest({ name: 'S', sources: [{ name: 'A', filter_subject: 'a.>', external: { api: '$JS.x.API', deliver: '' } }] }),
    );
    expect(s.subjects).toEqual([]);
    expect(s.sources).toEqual([{ name: 'A', filter_subject: 'a.>', external: { api: '$JS.x.API', deliver: '' } }]);
    expect(normaliseStreamConfig(parseStreamConfigRequest({ name: 'P', sources: [] })).subjects).toEqual(['P']);
  });

  it.each([
    [{ name: 'M', mirror: { name: 'O' }, subjects: ['m'] }, 400, 10034, 'stream mirrors can not contain subjects'],
    [{ name: 'M', mirror: { name: 'O' }, sources: [{ name: 'X' }] }, 400, 10031, 'stream mirrors can not also contain other sources'],
    [{ name: 'M', mirror: { name: 'O' }, first_seq: 5 }, 400, 10143, 'stream mirrors can not have first sequence configured'],
    [{ name: 'M', mirror: { name: 'a.b' } }, 400, 10142, 'mirrored stream name is invalid'],
    [
      { name: 'M', mirror: { name: 'O', filter_subject: 'a', subject_transforms: [{ src: 'a', dest: 'b' }] } },
      400,
      10150,
      'mirror with multiple subject transforms cannot also have a single subject filter',
    ],
    [
      { name: 'M', mirror: { name: 'O', subject_transforms: [{ src: 'a.>', dest: 'x.>' }, { src: 'a.b', dest: 'y' }] } },
      400,
      10152,
      'mirror subject filters can not overlap',
    ],
    [{ name: 'S', sources: [{ name: '' }] }, 400, 10141, 'sourced stream name is invalid'],
    [{ name: 'S', sources: [{ name: 'A' }, { name: 'A' }] }, 400, 10140, 'duplicate source configuration detected'],
    [{ name: 'S', sources: [{ name: 'A', subject_transforms: [{ src: 'a.*', dest: 'b.$2' }] }] }, 400, 10146, 'source transform: invalid mapping destination: wildcard index out of range in $2: [2]'],
    [{ name: 'S', sources: [{ name: 'A', consumer: { name: 'C' } }] }, 500, 10052, "stream configuration field 'sources.consumer' is not supported"],
    [
      { name: 'S', sources: [{ name: 'A', subject_transforms: [{ src: 'a.*', dest: 'p.{{partitions(3,1)}}' }] }] },
      400,
      10146,
      'source transform: invalid mapping destination: unknown function in {{partitions(3,1)}}',
    ],
    [{ name: 'M', mirror: { name: 'O', subject_transforms: [{ src: 'a.*', dest: 'p.{{split(1)}}' }] } }, 400, 10154, 'mirror transform: invalid mapping destination: not enough arguments passed to the function in {{split(1)}}'],
  ])('%j → %i %i', (body, code, errCode, description) => {
    expect(errorOf(body)).toEqual({ code, err_code: errCode, description });
  });

  it('an unknown field of a source is invalid JSON naming it (2.14 strict decoding), a wrong type invalid JSON', () => {
    expect(errorOf({ name: 'S', sources: [{ name: 'A', domain: 'hub' }] })).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON: json: unknown field "domain"' });
    expect(errorOf({ name: 'S', mirror: { name: 'A', opt_start_seq: 'x' } })).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON' });
  });

  it('a mirror may be removed (promotion) but not changed or added by update', () => {
    const m = normaliseStreamConfig(parseStreamConfigRequest({ name: 'M', mirror: { name: 'O' } }));
    const plain = normaliseStreamConfig(parseStreamConfigRequest({ name: 'M', subjects: ['m'] }));
    expect(checkStreamUpdate(m, plain).mirror).toBeUndefined();
    const changed = normaliseStreamConfig(parseStreamConfigRequest({ name: 'M', mirror: { name: 'O', filter_subject: 'x' } }));
    expect(() => checkStreamUpdate(m, changed)).toThrow('stream mirror configuration can not be updated');
    expect(() => checkStreamUpdate(plain, m)).toThrow('stream mirror configuration can not be updated');
  });
});

describe('Nats-Stream-Source', () => {
  it('is written as 2.14 writes it and read back to the same index name and sequence', () => {
    const iname = sourceIndexName({ name: 'ORDERS', filter_subject: 'orders.eu' }, apiPrefixHash);
    expect(iname).toBe('ORDERS orders.eu >');
    const value = sourceHeaderValue(iname, 42, 'orders.eu.1');
    expect(value).toBe('ORDERS 42 orders.eu > orders.eu.1');
    expect(parseSourceHeader(value)).toEqual({ iname, originSeq: 42 });
    expect(sourceIndexName({ name: 'A', subject_transforms: [{ src: 'a.>', dest: 'b.>' }, { src: '', dest: '' }] }, apiPrefixHash)).toBe('A a.>\f> b.>\f>');
    expect(sourceIndexName({ name: 'A', external: { api: '$JS.hub.API', deliver: '' } }, apiPrefixHash)).toBe(`A:${apiPrefixHash('$JS.hub.API')} > >`);
    expect(apiPrefixHash('$JS.hub.API')).toMatch(/^[0-9A-Za-z]{8}$/);
    expect(parseSourceHeader('A 5')).toBeNull();
  });

  it('replaces a daisy-chained header, strips Nats-Expected-* and Nats-Batch-*, keeps the rest byte for byte', () => {
    const block = Buffer.from('NATS/1.0\r\nNats-Msg-Id: x\r\nNats-Expected-Last-Sequence: 3\r\nNats-Stream-Source: B 1 > > b\r\nK: välue\r\n\r\n', 'latin1');
    const out = sourcedHeader(block, 'A 7 > > a.1')!.toString('latin1');
    expect(out).toBe('NATS/1.0\r\nNats-Msg-Id: x\r\nK: välue\r\nNats-Stream-Source: A 7 > > a.1\r\n\r\n');
    expect(readSourceHeader(Buffer.from(out, 'latin1'))).toBe('A 7 > > a.1');
    expect(sourcedHeader(null, 'A 1 > > a')!.toString()).toBe('NATS/1.0\r\nNats-Stream-Source: A 1 > > a\r\n\r\n');
    expect(sourcedHeader(null, undefined)).toBeNull();
    const plain = Buffer.from('NATS/1.0\r\nK: v\r\n\r\n');
    expect(sourcedHeader(plain, undefined)).toBe(plain);
  });
});

describe('subject transforms', () => {
  const compile = (src: string, dest: string): CompiledTransform => {
    const t = compileTransform({ src, dest });
    if ('kind' in t) throw new Error(JSON.stringify(t));
    return t;
  };

  it('maps wildcards by position, the rest by >, and leaves unmatched subjects', () => {
    expect(compile('$KV.a.>', '$KV.b.>').apply('$KV.a.k.x')).toBe('$KV.b.k.x');
    expect(compile('orders.*.*', 'by.$2.$1').apply('orders.eu.7')).toBe('by.7.eu');
    expect(compile('orders.*.*', 'by.{{wildcard(2)}}.{{ wildcard(1) }}').apply('orders.eu.7')).toBe('by.7.eu');
    expect(compile('orders.*', 'x').apply('other.1')).toBeNull();
    expect(compile('', '').apply('any.thing')).toBe('any.thing');
    expect(transformSubject([compile('a.*', 'b.$1'), compile('c.>', 'd.>')], 'c.1.2')).toBe('d.1.2');
    expect(transformSubject([compile('a.*', 'b.$1')], 'z')).toBe('z');
  });

  it('applies every mapping function nats-server validates', () => {
    expect(compile('a.*', 'p.{{partition(3,1)}}').apply('a.x')).toMatch(/^p\.[012]$/);
    expect(compile('a.*', '{{split(1,-)}}').apply('a.x-y')).toBe('x.y');
    expect(compile('a.*.>', 'b.{{splitFromRight(1,2)}}.>').apply('a.abcd.e')).toBe('b.ab.cd.e');
    expect(compile('a.*', '{{sliceFromLeft(1,2)}}').apply('a.abcde')).toBe('ab.cd.e');
  });

  it('refuses bad destinations with nats-server\'s texts', () => {
    expect(compileTransform({ src: 'a.*', dest: 'b.$2' })).toMatchObject({ kind: 'bad destination' });
    expect(compileTransform({ src: 'a.*', dest: 'b.>' })).toMatchObject({ kind: 'bad destination' });
    expect(compileTransform({ src: 'a..b', dest: 'x' })).toMatchObject({ kind: 'bad source' });
    expect(compileTransform({ src: 'a.*', dest: '{{left(1,2)}}' })).toEqual({ kind: 'bad destination', text: 'invalid mapping destination: unknown function in {{left(1,2)}}' });
  });
});
