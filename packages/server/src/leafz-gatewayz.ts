// /leafz and /gatewayz (and `$SYS.REQ.SERVER.<id|PING>.{LEAFZ,GATEWAYZ}`, `$SYS.REQ.ACCOUNT.<acc>.LEAFZ`) in
// nats-server's shapes. Flotilla opens no leafnode or gateway listener (those blocks only warn), so both are
// what nats-server answers with none: no leafs, and a Gatewayz with empty maps and no name, host or port.
import type { FlotillaServer } from './server.js';

export function leafz(server: FlotillaServer): Record<string, unknown> {
  return { server_id: server.serverId, now: new Date().toISOString(), leafnodes: 0, leafs: [] };
}

export function gatewayz(server: FlotillaServer): Record<string, unknown> {
  return { server_id: server.serverId, now: new Date().toISOString(), outbound_gateways: {}, inbound_gateways: {} };
}
