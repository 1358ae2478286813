// same_origin / allowed_origins: which browser origins may open a WebSocket (nats-server's checkOrigin).
// A request without an Origin header is always let in: a non-browser client can claim any origin anyway.

export interface ParsedOrigin {
  scheme: string;
  host: string;
  port: string;
}

/** host and port of "host[:port]", the port defaulting by scheme; lower-cased host, as nats-server. */
function hostAndPort(tls: boolean, hostport: string): { host: string; port: string } {
  const u = new URL(`http://${hostport}`);
  const port = u.port !== '' ? u.port : /:(80|443)$/.test(hostport) ? hostport.slice(hostport.lastIndexOf(':') + 1) : tls ? '443' : '80';
  return { host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** An allowed_origins entry, or nats-server's reason it is refused. */
export function parseOrigin(text: string): ParsedOrigin | string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `unable to parse allowed origin: parse "${text}": invalid URI for request`;
  }
  const scheme = u.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') {
    return `unable to parse allowed origin "${text}": allowed origins must be absolute URLs with http or https scheme`;
  }
  if (u.host === '') return `unable to parse allowed origin "${text}": host is required`;
  return { scheme, ...hostAndPort(scheme === 'https', u.host) };
}

export class OriginPolicy {
  private readonly allowed = new Map<string, ParsedOrigin[]>();

  constructor(
    private readonly sameOrigin: boolean,
    allowedOrigins: readonly string[],
    /** the listener serves TLS: the request's own scheme is https */
    private readonly tls: boolean,
  ) {
    for (const text of allowedOrigins) {
      const o = parseOrigin(text);
      if (typeof o === 'string') continue; // refused when the config was checked
      const list = this.allowed.get(o.host) ?? [];
      list.push(o);
      this.allowed.set(o.host, list);
    }
  }

  /** null when admitted, else why not (only logged: the client gets a bare 403). */
  check(origin: string | undefined, requestHost: string): string | null {
    if (!this.sameOrigin && this.allowed.size === 0) return null;
    if (origin === undefined || origin === '') return null;
    let o: ParsedOrigin;
    try {
      const u = new URL(origin);
      o = { scheme: u.protocol.slice(0, -1), ...hostAndPort(u.protocol === 'https:', u.host) };
    } catch {
      return `parse "${origin}": invalid URI for request`;
    }
    if (this.sameOrigin) {
      let own: { host: string; port: string };
      try {
        own = hostAndPort(this.tls, requestHost);
      } catch {
        return `invalid request host "${requestHost}"`;
      }
      if (o.host !== own.host || o.port !== own.port || o.scheme.toLowerCase() !== (this.tls ? 'https' : 'http')) return 'not same origin';
    }
    if (this.allowed.size > 0) {
      const list = this.allowed.get(o.host) ?? [];
      if (!list.some((a) => a.scheme === o.scheme && a.port === o.port)) return 'not in the allowed list';
    }
    return null;
  }
}
