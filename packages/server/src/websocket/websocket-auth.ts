// Who may connect over WebSocket. As nats-server (processClientOrLeafAuthentication): when the websocket
// block names a user, a token or a no_auth_user, those replace the top-level single user/token and
// no_auth_user for WebSocket clients (users, nkeys and accounts stay); its `authorization { timeout }`
// replaces the auth timeout; certificate mapping is the websocket tls block's `verify_and_map` (never the
// top-level one). Otherwise WebSocket clients authenticate exactly as TCP ones.
import type { AuthorizationOptions, ServerOptions } from '../config/options.js';
import { ClientAuth } from '../client-auth.js';

export function websocketAuthOf(o: ServerOptions, serverAuth: ClientAuth): ClientAuth {
  const wo = o.websocket;
  if (wo === undefined || wo.port === 0) return serverAuth;
  const wa = wo.authorization ?? {};
  const overrides = nonEmpty(wa.user) || nonEmpty(wa.token) || nonEmpty(wo.noAuthUser);
  const mapsOwn = wo.tls?.verifyAndMap === true;
  if (!overrides && wa.timeoutSec === undefined && mapsOwn === (o.tls?.verifyAndMap === true)) return serverAuth;
  const base = o.authorization ?? {};
  const auth: AuthorizationOptions = { ...base };
  if (overrides) {
    delete auth.user;
    delete auth.password;
    delete auth.token;
    if (nonEmpty(wa.user)) {
      auth.user = wa.user!;
      auth.password = wa.password ?? '';
    }
    if (nonEmpty(wa.token)) auth.token = wa.token!;
  }
  if (wa.timeoutSec !== undefined && wa.timeoutSec > 0) auth.timeoutSec = wa.timeoutSec;
  const noAuthUser = overrides ? wo.noAuthUser : o.noAuthUser;
  return new ClientAuth(auth, wo.tls, {
    ...(o.accounts !== undefined ? { accounts: o.accounts } : {}),
    ...(noAuthUser !== undefined && noAuthUser !== '' ? { noAuthUser } : {}),
    // operator mode and auth callout apply to WebSocket clients too
    ...serverAuth.delegates(),
  });
}

function nonEmpty(v: string | undefined): boolean {
  return v !== undefined && v !== '';
}
