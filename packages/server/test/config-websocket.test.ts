// `websocket {}` as nats-server's parseWebsocket and validateWebsocketOptions read it: keys and aliases,
// and the cross-key refusals with nats-server's texts.
import { describe, expect, it } from 'vitest';
import { configError, options } from './support/conf-text.js';

describe('websocket {} options', () => {
  it('reads every implemented key (and the aliases)', () => {
    const o = options(`websocket {
      listen: "127.0.0.1:8443"
      advertise: "ws.example.com:443"
      no_tls: true
      same_origin: true
      allowed_origins: ["https://a.example.com", "http://localhost:3000"]
      compress: true
      handshake_timeout: "2s"
      authorization { user: w, password: p, timeout: 3 }
      user_cookie: u
      pass_cookie: p
      token_cookie: t
      ping_interval: "30s"
      headers { "X-Frame-Options": "DENY" }
    }`);
    expect(o.websocket).toEqual({
      host: '127.0.0.1',
      port: 8443,
      advertise: 'ws.example.com:443',
      noTls: true,
      sameOrigin: true,
      allowedOrigins: ['https://a.example.com', 'http://localhost:3000'],
      compression: true,
      handshakeTimeoutMs: 2000,
      authorization: { user: 'w', password: 'p', timeoutSec: 3 },
      userCookie: 'u',
      passCookie: 'p',
      tokenCookie: 't',
      pingIntervalMs: 30_000,
      headers: { 'X-Frame-Options': 'DENY' },
    });
    expect(options('ws { port: -1, no_tls: true, origin: "https://x.example" }').websocket).toMatchObject({ port: -1, allowedOrigins: ['https://x.example'] });
  });

  it('nats-server refusals: TLS, origins, users with a ws user/token, no_auth_user, reserved headers', () => {
    expect(configError('websocket { port: 8080 }')).toBe('websocket requires TLS configuration');
    expect(configError('websocket { port: 8080, no_tls: true, allowed_origins: ["ftp://x.example"] }')).toBe(
      'unable to parse allowed origin "ftp://x.example": allowed origins must be absolute URLs with http or https scheme',
    );
    const users = 'authorization { users: [ { user: a, password: a } ] }\n';
    expect(configError(`${users}websocket { port: 8080, no_tls: true, authorization { user: w, password: p } }`)).toBe(
      'websocket authentication username not compatible with presence of users/nkeys',
    );
    expect(configError(`${users}websocket { port: 8080, no_tls: true, authorization { token: t } }`)).toBe(
      'websocket authentication token not compatible with presence of users/nkeys',
    );
    expect(configError(`${users}websocket { port: 8080, no_tls: true, no_auth_user: nobody }`)).toBe(
      'no_auth_user: "nobody" not present as user or nkey in authorization block or account configuration',
    );
    expect(configError('websocket { port: 8080, no_tls: true, headers { Upgrade: x } }')).toBe('websocket: invalid header "Upgrade" not allowed');
    expect(configError('websocket { port: 8080, no_tls: true, headers { "Sec-WebSocket-Foo": x } }')).toBe(
      'websocket: invalid header "Sec-WebSocket-Foo", "Sec-WebSocket-" prefix not allowed',
    );
    // without a port the block configures nothing, so nothing is checked (as nats-server)
    expect(options('websocket { no_tls: false }').websocket?.port).toBe(0);
  });

  it('an unknown key is an error', () => {
    expect(configError('websocket { port: 8080, no_tls: true, bogus: 1 }')).toMatch(/unknown field "bogus"/);
  });
});
