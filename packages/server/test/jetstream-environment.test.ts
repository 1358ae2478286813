import { describe, it, expect } from 'vitest';
import { hostname } from 'node:os';
import { expectedClusterSize } from '../src/cluster/jetstream-environment.js';

describe('expected cluster size for the meta bootstrap', () => {
  it('counts distinct routes that are not this node', async () => {
    const routes = ['nats://127.0.0.1:6222', 'nats://127.0.0.1:6223', 'nats://127.0.0.1:6224', 'nats://127.0.0.1:6223'];
    expect(await expectedClusterSize(routes, 6222, '127.0.0.1:6222')).toBe(3);
    expect(await expectedClusterSize(routes, 6225, '127.0.0.1:6225')).toBe(4);
    expect(await expectedClusterSize([], 6222, '127.0.0.1:6222')).toBe(1);
  });

  it('recognises itself by loopback names, credentials in the URL, its host name and DNS', async () => {
    expect(await expectedClusterSize(['nats://user:pw@localhost:7000', 'other.example:7000'], 7000, '10.1.2.3:7000')).toBe(2);
    expect(await expectedClusterSize([`nats://${hostname()}.svc.cluster:7000`, 'nats://10.9.9.9:7000'], 7000, '10.1.2.3:7000')).toBe(2);
    // A different port on this host is another node.
    expect(await expectedClusterSize(['nats://127.0.0.1:7001'], 7000, '127.0.0.1:7000')).toBe(2);
    // Not listening: nothing is self.
    expect(await expectedClusterSize(['nats://127.0.0.1:7000'], 0, '')).toBe(2);
  });
});
