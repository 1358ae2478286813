// /leafz and /gatewayz (and `$SYS.REQ.SERVER.<id|PING>.{LEAFZ,GATEWAYZ}`, `$SYS.REQ.ACCOUNT.<acc>.LEAFZ`) in
// nats-server's shapes. /leafz lists the leaf links up now (packages/server/src/leafnode); Flotilla opens no
// gateway listener (that block only warns), so /gatewayz is what nats-server answers with none.
import type { FlotillaServer } from './server.js';

export function leafz(server: FlotillaServer, subs = false): Record<string, unknown> {
  const leafs = server.leafNodes?.leafz(subs) ?? [];
  return { server_id: server.serverId, now: new Date().toISOString(), leafnodes: leafs.length, leafs };
}

export function gatewayz(server: FlotillaServer): Record<string, unknown> {
  return { server_id: server.serverId, now: new Date().toISOString(), outbound_gateways: {}, inbound_gateways: {} };
}
