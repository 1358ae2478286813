// ADR-56 persist modes on one node through the stock @nats-io/jetstream v3 client: `persist_mode: async` on
// an R1 file stream acknowledges publishes (the ack before the write reaches disk), its messages are there
// after a restart that was clean; nats-server 2.14.5's refusals (checkStreamCfg, configUpdateCheck in
// stream.go) answer memory storage, R3 and a change by update. The default mode (fsync before every ack) is
// what the other JetStream tests and the power-loss tests already exercise; here it is only checked to stay
// the default. nats-server 2.9.10 predates persist modes (2.12), so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection } from '@nats-io/transport-node';
import { jetstream, PersistMode, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { JetStreamV3Server, jsApiFailure } from './helpers/jetstream-v3-server.js';

const srv = new JetStreamV3Server('flotilla-persist-');
let nc: NatsConnection;
let jsm: JetStreamManager;

async function start(): Promise<void> {
  ({ nc, jsm } = await srv.start());
}

async function stop(): Promise<void> {
  expect(await srv.stop()).toBe(0);
}

beforeAll(start);
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

const invalid = (description: string) => ({ code: 500, err_code: 10052, description });

describe('persist_mode (ADR-56)', () => {
  it('the default mode is not shown, async is kept in the config', async () => {
    const plain = await jsm.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
    expect(plain.config.persist_mode).toBeUndefined();
    const explicitDefault = await jsm.streams.add({ name: 'DEF', subjects: ['def.>'], persist_mode: PersistMode.Default });
    expect(explicitDefault.config.persist_mode).toBeUndefined();
    const async = await jsm.streams.add({ name: 'ASYNC', subjects: ['async.>'], persist_mode: PersistMode.Async });
    expect(async.config.persist_mode).toBe('async');
    expect((await jsm.streams.info('ASYNC')).config.persist_mode).toBe('async');
  });

  it('async is refused on memory storage and on replicated streams', async () => {
    expect(await jsApiFailure(jsm.streams.add({ name: 'MEM', subjects: ['mem'], storage: 'memory' as StreamConfig['storage'], persist_mode: PersistMode.Async }))).toEqual(
      invalid('async persist mode is only supported on file storage'),
    );
    expect(await jsApiFailure(jsm.streams.add({ name: 'R3', subjects: ['r3'], num_replicas: 3, persist_mode: PersistMode.Async }))).toEqual(
      invalid('async persist mode is not supported on replicated streams'),
    );
  });

  it('an update may not change the persist mode either way', async () => {
    const asyncCfg = (await jsm.streams.info('ASYNC')).config;
    expect(await jsApiFailure(jsm.streams.update('ASYNC', { ...asyncCfg, persist_mode: PersistMode.Default }))).toEqual(
      invalid('stream configuration update can not change persist mode'),
    );
    const plainCfg = (await jsm.streams.info('PLAIN')).config;
    expect(await jsApiFailure(jsm.streams.update('PLAIN', { ...plainCfg, persist_mode: PersistMode.Async }))).toEqual(
      invalid('stream configuration update can not change persist mode'),
    );
    // Other fields still update on an async stream.
    const updated = await jsm.streams.update('ASYNC', { ...asyncCfg, max_msgs: 10_000 });
    expect(updated.config.max_msgs).toBe(10_000);
    expect(updated.config.persist_mode).toBe('async');
  });

  it('async acks every publish in order, and the messages are there after a restart', async () => {
    const js = jetstream(nc);
    const n = 500;
    const acks = await Promise.all(Array.from({ length: n }, (_, i) => js.publish(`async.${i % 5}`, `m${i}`)));
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(acks.every((a) => a.stream === 'ASYNC' && !a.duplicate)).toBe(true);
    // A duplicate still answers with the original's sequence.
    const first = await js.publish('async.x', 'once', { msgID: 'id-1' });
    const again = await js.publish('async.x', 'once', { msgID: 'id-1' });
    expect(again).toMatchObject({ seq: first.seq, duplicate: true });
    await stop();
    await start();
    const info = await jsm.streams.info('ASYNC');
    expect(info.state.messages).toBe(n + 1);
    expect(info.state.last_seq).toBe(n + 1);
    expect(info.config.persist_mode).toBe('async');
    const last = await jsm.streams.getMessage('ASYNC', { seq: n });
    expect(last.string()).toBe(`m${n - 1}`);
  });
});
