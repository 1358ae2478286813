// host:port and URL forms accepted by nats-server for listen addresses and routes, normalised to
// { host, port } / "host:port". Route URLs may carry a scheme (nats://, nats-route://, grpc://, tls://)
// and user info, which Flotilla does not use for routing.

export interface HostPort {
  host: string;
  port: number;
}

const ROUTE_SCHEMES = new Set(['nats', 'nats-route', 'route', 'grpc', 'tls']);

/** Go net.SplitHostPort: "h:p", "[v6]:p", ":p". Port may be -1 (random) when allowRandom. */
export function splitHostPort(text: string, allowRandom: boolean): HostPort | string {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return `could not parse address string "${text}"`;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return `could not parse address string "${text}" (expected host:port)`;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return `could not parse address string "${text}" (IPv6 hosts need [brackets])`;
  }
  const port = parsePort(portText, allowRandom);
  if (port === undefined) return `could not parse port "${portText}" in "${text}"`;
  return { host, port };
}

/** Decimal port 0..65535, or -1 when allowRandom. */
export function parsePort(text: string, allowRandom: boolean): number | undefined {
  if (!/^-?\d+$/.test(text)) return undefined;
  const port = Number(text);
  if (port === -1 && allowRandom) return port;
  if (port < 0 || port > 65535) return undefined;
  return port;
}

/** Strips an optional scheme and user info; error string when the scheme is not one nats-server routes use. */
function stripUrlDecorations(text: string): string | { error: string } {
  let rest = text.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(rest);
  if (scheme) {
    if (!ROUTE_SCHEMES.has(scheme[1]!.toLowerCase())) return { error: `unsupported URL scheme "${scheme[1]}" in "${text}"` };
    rest = rest.slice(scheme[0].length);
  }
  const at = rest.lastIndexOf('@');
  if (at >= 0) rest = rest.slice(at + 1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  return rest;
}

/** A route to solicit: must name a host and a real port. Returns "host:port" or an error message. */
export function normaliseRouteUrl(text: string): { route: string } | { error: string } {
  const stripped = stripUrlDecorations(text);
  if (typeof stripped !== 'string') return stripped;
  const hp = splitHostPort(stripped, false);
  if (typeof hp === 'string') return { error: `error parsing route url "${text}": ${hp}` };
  if (hp.host === '') return { error: `error parsing route url "${text}": missing host` };
  if (hp.port === 0) return { error: `error parsing route url "${text}": port 0 is not a route port` };
  return { route: formatHostPort(hp) };
}

/** A listen URL such as --cluster nats://0.0.0.0:6222 (port -1 = random); empty host means all interfaces. */
export function parseListenUrl(text: string): HostPort | { error: string } {
  const stripped = stripUrlDecorations(text);
  if (typeof stripped !== 'string') return stripped;
  const hp = splitHostPort(stripped, true);
  if (typeof hp === 'string') return { error: hp };
  return { host: hp.host === '' ? '0.0.0.0' : hp.host, port: hp.port };
}

export function formatHostPort(hp: HostPort): string {
  return hp.host.includes(':') ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}

/** The user info of a URL such as nats://user:pass@h:p (percent-decoded), or undefined when it has none. */
export function urlCredentials(text: string): { user: string; password?: string } | undefined {
  let rest = text.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  const at = rest.lastIndexOf('@');
  if (at < 0) return undefined;
  const info = rest.slice(0, at);
  const colon = info.indexOf(':');
  const decode = (v: string): string => {
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  };
  return colon < 0 ? { user: decode(info) } : { user: decode(info.slice(0, colon)), password: decode(info.slice(colon + 1)) };
}
