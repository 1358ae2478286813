// user_cookie / pass_cookie / token_cookie / jwt_cookie: a browser cannot set CONNECT fields from a page that does not
// know the secret, so nats-server (2.10+) reads them from the handshake's cookies when CONNECT gives none.
import type { IncomingMessage } from 'node:http';
import type { WebsocketOptions } from '../config/options.js';

/** Cookie name → value of a Cookie header (first occurrence wins; quoted values unquoted, as Go's). */
function cookiesOf(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  const header = req.headers.cookie;
  if (header === undefined) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name !== '' && !out.has(name)) out.set(name, value);
  }
  return out;
}

/** The CONNECT fields the configured cookies supply (undefined when none is configured or sent). */
export function cookieCredentials(req: IncomingMessage, o: WebsocketOptions): Record<string, string> | undefined {
  if (o.userCookie === undefined && o.passCookie === undefined && o.tokenCookie === undefined && o.jwtCookie === undefined) return undefined;
  const cookies = cookiesOf(req);
  const fields: Record<string, string> = {};
  const take = (cookie: string | undefined, field: string): void => {
    const v = cookie === undefined ? undefined : cookies.get(cookie);
    if (v !== undefined && v !== '') fields[field] = v;
  };
  take(o.userCookie, 'user');
  take(o.passCookie, 'pass');
  take(o.tokenCookie, 'auth_token');
  take(o.jwtCookie, 'jwt');
  return Object.keys(fields).length > 0 ? fields : undefined;
}
