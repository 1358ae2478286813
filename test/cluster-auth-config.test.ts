// Cluster authentication options as nats-server spells them: `cluster { authorization {} tls {} }`, and
// credentials in --cluster / --routes / `routes` URLs; and what the server derives from them.
import { rmSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import { resolveOptions, type OptionsResult } from '../packages/server/src/config/load-options.js';
import { clusterSecurityOf } from '../packages/server/src/cluster/cluster-security.js';
import { secretOf } from '@flotilla/cluster';
import { makeClusterCertificates } from './helpers/cluster-certificates.js';

function resolveWith(conf: string | null, argv: string[]): OptionsResult {
  return resolveOptions(conf === null ? argv : ['-c', 'test.conf', ...argv], {}, () => conf ?? '');
}

function run(result: OptionsResult) {
  if (result.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(result)}`);
  return result;
}

describe('cluster auth options', () => {
  it('reads cluster { authorization { user, password } } and route URL credentials, with no warning', () => {
    const r = run(
      resolveWith(
        'cluster { name: c, listen: "127.0.0.1:6222", authorization { user: route, password: pw, timeout: 2 }, routes: ["nats://route:pw@10.0.0.2:6222", "nats://10.0.0.3:6222"] }',
        [],
      ),
    );
    expect(r.options.cluster).toMatchObject({
      routes: ['10.0.0.2:6222', '10.0.0.3:6222'],
      authorization: { user: 'route', password: 'pw', timeoutMs: 2000 },
      routeCredentials: { '10.0.0.2:6222': { user: 'route', password: 'pw' } },
    });
    expect(r.warnings.filter((w) => /cluster/.test(w))).toEqual([]);
    const sec = clusterSecurityOf(r.options.cluster!);
    expect(sec.secret).toBe(secretOf({ user: 'route', password: 'pw' }));
    expect(sec.routeSecrets.get('10.0.0.2:6222')).toBe(sec.secret);
    expect(sec.tls).toBeUndefined();
  });

  it('reads authorization { timeout } as seconds or a duration; the default is 2 s, or the TLS timeout plus 1 s', () => {
    const timeoutOf = (conf: string, argv: string[] = []): number => clusterSecurityOf(run(resolveWith(conf, argv)).options.cluster!).authTimeoutMs;
    expect(timeoutOf('cluster { listen: "127.0.0.1:-1", authorization { token: t, timeout: 0.5 } }')).toBe(500);
    expect(timeoutOf('cluster { listen: "127.0.0.1:-1", authorization { token: t, timeout: "3s" } }')).toBe(3000);
    expect(timeoutOf('cluster { listen: "127.0.0.1:-1", authorization { token: t } }')).toBe(2000);
    const certs = makeClusterCertificates();
    try {
      const files = certs.node('n1');
      const tls = `tls { cert_file: "${files.certFile}", key_file: "${files.keyFile}", ca_file: "${certs.caFile}", timeout: 4 }`;
      expect(timeoutOf(`cluster { listen: "127.0.0.1:-1", authorization { token: t }, ${tls} }`)).toBe(5000);
    } finally {
      rmSync(certs.dir, { recursive: true, force: true });
    }
    // Credentials from --cluster replace the file's, not its timeout.
    expect(timeoutOf('cluster { authorization { user: a, password: b, timeout: 7 } }', ['--cluster', 'nats://u:p@127.0.0.1:-1'])).toBe(7000);
    const bad = resolveWith('cluster { listen: "127.0.0.1:-1", authorization { token: t, timeout: [1] } }', []);
    expect(bad.kind).toBe('config-error');
  });

  it('accepts a token, and refuses a token together with a user', () => {
    const r = run(resolveWith('cluster { listen: "127.0.0.1:-1", authorization { token: "t0k" } }', []));
    expect(clusterSecurityOf(r.options.cluster!).secret).toBe(secretOf({ token: 't0k' }));
    const bad = resolveWith('cluster { listen: "127.0.0.1:-1", authorization { token: "t", user: u } }', []);
    expect(bad.kind).toBe('config-error');
  });

  it('takes the route auth from --cluster URL credentials and per-route ones from --routes (percent-decoded)', () => {
    const r = run(resolveWith(null, ['--cluster', 'nats://ruser:p%40ss@127.0.0.1:-1', '--routes', 'nats://a:b@h1:1,nats://h2:2']));
    expect(r.options.cluster).toMatchObject({
      listen: { host: '127.0.0.1', port: -1 },
      routes: ['h1:1', 'h2:2'],
      authorization: { user: 'ruser', password: 'p@ss' },
      routeCredentials: { 'h1:1': { user: 'a', password: 'b' } },
    });
    const sec = clusterSecurityOf(r.options.cluster!);
    expect(sec.secret).toBe(secretOf({ user: 'ruser', password: 'p@ss' }));
    expect(sec.routeSecrets.get('h1:1')).toBe(secretOf({ user: 'a', password: 'b' }));
    expect(sec.routeSecrets.has('h2:2')).toBe(false);
  });

  it('without an authorization block, the routes\' credentials are the node secret', () => {
    const r = run(resolveWith(null, ['--cluster', 'nats://127.0.0.1:-1', '--routes', 'nats://a:b@h1:1']));
    expect(clusterSecurityOf(r.options.cluster!).secret).toBe(secretOf({ user: 'a', password: 'b' }));
    const plain = run(resolveWith(null, ['--cluster', 'nats://127.0.0.1:-1']));
    expect(clusterSecurityOf(plain.options.cluster!).secret).toBe('');
  });

  it('reads cluster { tls { cert_file, key_file, ca_file, verify, timeout } } and requires ca_file', () => {
    const r = run(resolveWith('cluster { listen: "127.0.0.1:-1", tls { cert_file: "/c.pem", key_file: "/k.pem", ca_file: "/ca.pem", verify: true, timeout: 3 } }', []));
    expect(r.options.cluster!.tls).toEqual({ certFile: '/c.pem', keyFile: '/k.pem', caFile: '/ca.pem', timeoutMs: 3000 });
    const noCa = resolveWith('cluster { listen: "127.0.0.1:-1", tls { cert_file: "/c.pem", key_file: "/k.pem" } }', []);
    expect(noCa.kind).toBe('config-error');
    expect(JSON.stringify(noCa)).toContain("missing 'ca_file' in cluster TLS configuration");
  });
});
