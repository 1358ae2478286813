// The filter every `$SYS.REQ.SERVER.PING.*` request may carry (nats-server's EventFilterOptions): a server
// that does not match stays silent, so a ping reaches only the servers asked for.
import type { FlotillaServer } from '../server.js';

export interface EventFilter {
  server_name?: string;
  cluster?: string;
  host?: string;
  exact_match?: boolean;
  tags?: string[];
  domain?: string;
}

/** true when the request is not for this server (nats-server's filterRequest). */
export function filteredOut(server: FlotillaServer, f: EventFilter): boolean {
  const name = server.serverName;
  const host = server.options.host;
  const cluster = server.cluster?.node.clusterName || server.options.cluster?.name || '';
  const differs = (want: string | undefined, have: string): boolean =>
    typeof want === 'string' && want !== '' && (f.exact_match === true ? want !== have : !have.includes(want));
  if (differs(f.server_name, name) || differs(f.host, host) || differs(f.cluster, cluster)) return true;
  // Flotilla has no server tags: a request for any tag is not for it.
  if (Array.isArray(f.tags) && f.tags.length > 0) return true;
  if (typeof f.domain === 'string' && f.domain !== '' && f.domain !== (server.options.jetstream.domain ?? '')) return true;
  return false;
}
