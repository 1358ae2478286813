// Monitoring endpoints report what the server is doing.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

let server: FlotillaProcess;
let nc: NatsConnection;

const get = async (path: string): Promise<Record<string, any>> => {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
};

beforeAll(async () => {
  server = await startFlotilla({ args: ['-n', 'mon-1'] });
  nc = await connect({ servers: server.url, name: 'monitored', reconnect: false });
});

afterAll(async () => {
  await nc.close();
  await server.stop();
});

describe('monitoring', () => {
  it('/healthz', async () => {
    expect(await get('/healthz')).toEqual({ status: 'ok' });
  });

  it('/varz counts connections, subscriptions, messages and bytes', async () => {
    const before = await get('/varz');
    nc.subscribe('mon.a');
    nc.subscribe('mon.b');
    for (let i = 0; i < 10; i++) nc.publish('mon.a', 'abcd');
    await nc.flush();
    const varz = await get('/varz');
    expect(varz['server_name']).toBe('mon-1');
    expect(varz['server_id']).toMatch(/^N/);
    expect(varz['version']).toMatch(/^2\.11\./);
    expect(varz['connections']).toBe(1);
    expect(varz['total_connections']).toBeGreaterThanOrEqual(1);
    expect(varz['subscriptions']).toBe(before['subscriptions'] + 2);
    expect(varz['in_msgs'] - before['in_msgs']).toBe(10);
    expect(varz['in_bytes'] - before['in_bytes']).toBe(40);
    expect(varz['out_msgs'] - before['out_msgs']).toBe(10);
    expect(varz['out_bytes'] - before['out_bytes']).toBe(40);
    expect(varz['mem']).toBeGreaterThan(1_000_000);
    expect(typeof varz['cpu']).toBe('number');
    expect(varz['uptime']).toMatch(/^\d+s$|m/);
  });

  it('/connz lists each connection with its counters and subscriptions', async () => {
    const other = await connect({ servers: server.url, name: 'second', reconnect: false });
    other.subscribe('mon.c');
    other.publish('mon.a', 'xy');
    await other.flush();
    const connz = await get('/connz?subs=1');
    expect(connz['num_connections']).toBe(2);
    const second = connz['connections'].find((c: any) => c.name === 'second');
    expect(second).toMatchObject({ ip: '127.0.0.1', lang: 'nats.js', in_msgs: 1, in_bytes: 2, subscriptions: 1 });
    expect(second.subscriptions_list).toEqual(['mon.c']);
    expect(second.cid).toBeGreaterThan(0);
    expect(second.pending_bytes).toBe(0);
    expect(second.port).toBeGreaterThan(0);
    const first = connz['connections'].find((c: any) => c.name === 'monitored');
    expect(first.out_msgs).toBeGreaterThanOrEqual(11);
    await other.close();
  });

  it('unknown paths are 404', async () => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/nope`);
    expect(res.status).toBe(404);
  });
});

describe('/metrics', () => {
  const scrape = async (): Promise<Map<string, number>> => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const values = new Map<string, number>();
    for (const line of (await res.text()).split('\n')) {
      if (line.startsWith('#') || line.trim() === '') continue;
      const m = /^([a-z_:]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
      if (m) values.set(m[1]!, Number(m[3]));
    }
    return values;
  };

  it('counts connections, messages and bytes as Prometheus counters', async () => {
    const before = await scrape();
    const nc2 = await connect({ servers: server.url, reconnect: false });
    nc2.subscribe('metrics.x');
    for (let i = 0; i < 25; i++) nc2.publish('metrics.x', '12345678');
    await nc2.flush();
    const after = await scrape();
    expect(after.get('flotilla_client_connections')).toBe(before.get('flotilla_client_connections')! + 1);
    expect(after.get('flotilla_client_connections_total')! - before.get('flotilla_client_connections_total')!).toBe(1);
    expect(after.get('flotilla_messages_received_total')! - before.get('flotilla_messages_received_total')!).toBe(25);
    expect(after.get('flotilla_messages_sent_total')! - before.get('flotilla_messages_sent_total')!).toBe(25);
    expect(after.get('flotilla_received_bytes_total')! - before.get('flotilla_received_bytes_total')!).toBe(200);
    expect(after.get('process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(after.get('flotilla_subscriptions')).toBeGreaterThanOrEqual(1);
    await nc2.close();
  });
});
