// Consumer management with the real client: add/info/list/update/delete, nats-server's errors, and the
// ConsumerInfo numbers the client relies on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, DeliverPolicy, nanos, type JetStreamManager, type NatsConnection } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

// nats-server 2.9 ignores `action` (2.10 feature): there a differing create updates the consumer.
const SERVER_29 = process.env['E2E_SERVER'] === 'nats-server';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-consumer-');
  ({ nc, jsm } = fixture);
  await jsm.streams.add({ name: 'C1', subjects: ['c1.>'] });
  for (const s of ['c1.a', 'c1.b', 'c1.a']) await fixture.js.publish(s, 'x');
});

afterAll(() => fixture?.stop());

describe('consumers via jsm.consumers', () => {
  it('adds a durable and reports ConsumerInfo like nats-server', async () => {
    const ci = await jsm.consumers.add('C1', { durable_name: 'D1', ack_policy: AckPolicy.Explicit });
    expect(ci.stream_name).toBe('C1');
    expect(ci.name).toBe('D1');
    expect(ci.config).toMatchObject({
      durable_name: 'D1',
      deliver_policy: 'all',
      ack_policy: 'explicit',
      ack_wait: 30_000_000_000,
      max_deliver: -1,
      replay_policy: 'instant',
      max_waiting: 512,
      max_ack_pending: 1000,
    });
    expect(ci.delivered).toMatchObject({ consumer_seq: 0, stream_seq: 0 });
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 0, stream_seq: 0 });
    expect([ci.num_ack_pending, ci.num_redelivered, ci.num_waiting, ci.num_pending]).toEqual([0, 0, 0, 3]);
    const info = await jsm.consumers.info('C1', 'D1');
    expect(info.num_pending).toBe(3);
  });

  it('computes num_pending with filters and deliver policies', async () => {
    const a = await jsm.consumers.add('C1', { durable_name: 'FA', filter_subject: 'c1.a', ack_policy: AckPolicy.Explicit });
    expect(a.num_pending).toBe(2);
    const last = await jsm.consumers.add('C1', { durable_name: 'LAST', deliver_policy: DeliverPolicy.Last, ack_policy: AckPolicy.None });
    expect(last.num_pending).toBe(1);
    expect(last.delivered.stream_seq).toBe(2);
    const fresh = await jsm.consumers.add('C1', { durable_name: 'NEW', deliver_policy: DeliverPolicy.New, ack_policy: AckPolicy.None });
    expect(fresh.num_pending).toBe(0);
    const seq = await jsm.consumers.add('C1', { durable_name: 'SEQ', deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 2, ack_policy: AckPolicy.None });
    expect(seq.num_pending).toBe(2);
  });

  it('refuses what nats-server refuses, with its codes', async () => {
    await expect(jsm.consumers.add('NOPE', { durable_name: 'X', ack_policy: AckPolicy.Explicit })).rejects.toThrow('stream not found');
    const err = await jsm.consumers
      .add('C1', { durable_name: 'BAD', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.StartSequence })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(err).toEqual({
      code: 400,
      err_code: 10094,
      description: 'consumer delivery policy is deliver by start sequence, but optional start sequence is not set',
    });
    const hb = await jsm.consumers
      .add('C1', { durable_name: 'HB', ack_policy: AckPolicy.Explicit, idle_heartbeat: nanos(1000) })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(hb).toEqual({ code: 400, err_code: 10088, description: 'consumer idle heartbeat requires a push based consumer' });
    await expect(jsm.consumers.info('C1', 'missing')).rejects.toThrow('consumer not found');
  });

  it('updates allowed fields and refuses the others', async () => {
    await jsm.consumers.add('C1', { durable_name: 'UPD', ack_policy: AckPolicy.Explicit });
    const upd = await jsm.consumers.update('C1', 'UPD', { max_deliver: 7, description: 'changed' });
    expect(upd.config.max_deliver).toBe(7);
    expect(upd.config.description).toBe('changed');
    // creating again with a different config is "consumer already exists" (action create)
    const again = await jsm.consumers
      .add('C1', { durable_name: 'UPD', ack_policy: AckPolicy.Explicit, max_deliver: 3 })
      .then((ci) => ci.config.max_deliver)
      .catch((e: { api_error?: { err_code: number } }) => e.api_error?.err_code);
    expect(again).toBe(SERVER_29 ? 3 : 10148);
    const refused = await jsm.consumers
      .update('C1', 'UPD', { ack_policy: AckPolicy.All })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(refused).toEqual({ code: 500, err_code: 10012, description: 'ack policy can not be updated' });
  });

  it('lists and deletes', async () => {
    await jsm.consumers.add('C1', { durable_name: 'GONE', ack_policy: AckPolicy.Explicit });
    const names = (await jsm.consumers.list('C1').next()).map((c) => c.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('GONE');
    expect(await jsm.consumers.delete('C1', 'GONE')).toBe(true);
    await expect(jsm.consumers.delete('C1', 'GONE')).rejects.toThrow('consumer not found');
    const after = (await jsm.consumers.list('C1').next()).map((c) => c.name);
    expect(after).not.toContain('GONE');
    const si = await jsm.streams.info('C1');
    expect(si.state.consumer_count).toBe(after.length);
  });

  it('removes an ephemeral consumer after its inactive threshold', async () => {
    const ci = await jsm.consumers.add('C1', { ack_policy: AckPolicy.Explicit, inactive_threshold: nanos(500) });
    expect(ci.config.inactive_threshold).toBe(500_000_000);
    let gone = false;
    for (let i = 0; i < 40 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100));
      gone = await jsm.consumers.info('C1', ci.name).then(
        () => false,
        () => true,
      );
    }
    expect(gone).toBe(true);
  });
});
