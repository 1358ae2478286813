// An account's `jetstream` key as nats-server's parseJetStreamForAccount reads it: enabled/disabled (bool or
// string), or a block of limits under each of nats-server's names; anything else is an error naming its line.
import { describe, expect, it } from 'vitest';
import { resolveOptions, type OptionsResult } from '../src/config/load-options.js';
import type { AccountJetStreamOptions } from '../src/config/options.js';

function withConf(text: string): OptionsResult {
  return resolveOptions(['-c', 'test.conf'], {}, () => text);
}

function accountJetStream(js: string): AccountJetStreamOptions | undefined {
  const r = withConf(`jetstream { store_dir: /tmp/x }\naccounts { A: { users: [ { user: a, password: a } ], jetstream: ${js} } }`);
  if (r.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.options.accounts?.[0]?.jetstream;
}

function errorOf(js: string): string {
  const r = withConf(`accounts {\n  A: { jetstream: ${js} } }`);
  if (r.kind !== 'config-error') throw new Error(`expected config-error, got ${JSON.stringify(r)}`);
  return r.message;
}

const UNLIMITED: AccountJetStreamOptions = {
  maxMemoryBytes: -1,
  maxStoreBytes: -1,
  maxStreams: -1,
  maxConsumers: -1,
  maxAckPending: -1,
  memoryMaxStreamBytes: -1,
  storeMaxStreamBytes: -1,
  maxBytesRequired: false,
};

describe("an account's jetstream", () => {
  it('enabled / true / enable: JetStream without limits; disabled / false / absent: none', () => {
    for (const on of ['enabled', 'true', 'enable', '"ENABLED"']) expect(accountJetStream(on)).toEqual(UNLIMITED);
    for (const off of ['disabled', 'false', 'disable']) expect(accountJetStream(off)).toBeUndefined();
  });

  it('reads every limit under each of its names, sizes with suffixes', () => {
    expect(accountJetStream('{ max_mem: 1K, max_file: 2MB, max_streams: 3, max_consumers: 4, max_ack_pending: 5, max_bytes_required: true, mem_max_stream_bytes: 6, store_max_stream_bytes: 7 }')).toEqual({
      maxMemoryBytes: 1000, // the lexer's K is 1000, KB 1024, as nats-server's
      maxStoreBytes: 2 * 1024 * 1024,
      maxStreams: 3,
      maxConsumers: 4,
      maxAckPending: 5,
      memoryMaxStreamBytes: 6,
      storeMaxStreamBytes: 7,
      maxBytesRequired: true,
    });
    expect(accountJetStream('{ memory: 1, disk: 2, streams: 3, consumers: 4, max_bytes: true, memory_max_stream_bytes: 6, disk_max_stream_bytes: 7 }')).toEqual({
      ...UNLIMITED,
      maxMemoryBytes: 1,
      maxStoreBytes: 2,
      maxStreams: 3,
      maxConsumers: 4,
      maxBytesRequired: true,
      memoryMaxStreamBytes: 6,
      storeMaxStreamBytes: 7,
    });
    expect(accountJetStream('{ max_memory: 8, max_store: 9, store: 10, mem: 11, max_disk: 12, max_stream_bytes: false, cluster_traffic: owner }')).toEqual({
      ...UNLIMITED,
      maxMemoryBytes: 11,
      maxStoreBytes: 12,
    });
  });

  it('refuses what nats-server refuses, naming the line', () => {
    expect(errorOf('maybe')).toBe("test.conf:2: Expected 'enabled' or 'disabled' for string value, got 'maybe'");
    expect(errorOf('[1]')).toBe('test.conf:2: Expected map, bool or string to define JetStream, got an array');
    expect(errorOf('{ max_mem: "1G" }')).toBe('test.conf:2: Expected a parseable size for "max_mem", got 1G');
    expect(errorOf('{ max_bytes_required: 1 }')).toBe('test.conf:2: Expected a parseable bool for "max_bytes_required", got 1');
    expect(errorOf('{ cluster_traffic: nobody }')).toBe('test.conf:2: Expected \'system\' or \'owner\' string value for "cluster_traffic", got nobody');
    expect(errorOf('{ max_widgets: 1 }')).toBe('test.conf:2: unknown field "max_widgets"');
  });
});
