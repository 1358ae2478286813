// The websocket block's cross-key rules, as nats-server's validateWebsocketOptions states them (its
// error texts), plus the refusals of what Flotilla does not implement inside it.
import type { ServerOptions } from '../config/options.js';
import { parseOrigin } from './origin-policy.js';

/** Headers a config may not add to the 101 response (nats-server sets them itself). */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'connection', 'upgrade', 'nats-no-masking']);

export function websocketOptionsProblem(o: ServerOptions): string | undefined {
  const wo = o.websocket;
  // Without a port the block configures nothing (nats-server checks nothing either).
  if (wo === undefined || wo.port === 0) return undefined;
  if (wo.tls === undefined && !wo.noTls) return 'websocket requires TLS configuration';
  for (const ao of wo.allowedOrigins) {
    const problem = parseOrigin(ao);
    if (typeof problem === 'string') return problem;
  }
  if (wo.noAuthUser !== undefined) {
    const users = [...(o.authorization?.users ?? []), ...(o.accounts ?? []).flatMap((a) => a.users)];
    if (users.length === 0) return `no_auth_user: "${wo.noAuthUser}" present, but users/nkeys are not defined`;
    if (!users.some((u) => u.user === wo.noAuthUser || u.nkey === wo.noAuthUser)) {
      return `no_auth_user: "${wo.noAuthUser}" not present as user or nkey in authorization block or account configuration`;
    }
  }
  if ((o.authorization?.users ?? []).length > 0) {
    if (wo.authorization?.user !== undefined && wo.authorization.user !== '') return 'websocket authentication username not compatible with presence of users/nkeys';
    if (wo.authorization?.token !== undefined && wo.authorization.token !== '') return 'websocket authentication token not compatible with presence of users/nkeys';
  }
  for (const key of Object.keys(wo.headers ?? {})) {
    const k = key.toLowerCase();
    if (RESERVED_HEADERS.has(k)) return `websocket: invalid header "${key}" not allowed`;
    if (k.startsWith('sec-websocket-')) return `websocket: invalid header "${key}", "Sec-WebSocket-" prefix not allowed`;
  }
  return undefined;
}
