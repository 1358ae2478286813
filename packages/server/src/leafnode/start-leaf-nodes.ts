// Builds and starts a server's LeafNodes from its options (loaded only when `leafnodes {}` is configured).
import type { FlotillaServer } from '../server.js';
import type { LeafNodeOptions } from './leafnode-options.js';
import { LeafNodes } from './leaf-nodes.js';
import { ADVERTISED_NATS_VERSION } from '../version.js';

export async function startLeafNodes(server: FlotillaServer, options: LeafNodeOptions): Promise<LeafNodes> {
  const o = server.options;
  const leafs = new LeafNodes(options, {
    serverId: server.serverId,
    serverName: server.serverName,
    version: ADVERTISED_NATS_VERSION,
    maxPayloadBytes: o.maxPayloadBytes,
    domain: o.jetstream.domain ?? '',
    clientHost: o.host,
    routerOf: (account) => server.accounts.find(account)?.router,
    log: server.log,
  });
  await leafs.start();
  return leafs;
}
