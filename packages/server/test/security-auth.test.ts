// Authentication pieces: plain and bcrypt passwords and tokens (bcrypt off the event loop, remembered once
// verified), default permissions, certificate identities for verify_and_map, CONNECT redaction and the
// per-connection error-rate bound.
import { describe, it, expect, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { ClientAuth } from '../src/client-auth.js';
import { BcryptVerifier, isBcryptHash } from '../src/security/bcrypt-verifier.js';
import { certificateIdentities } from '../src/security/certificate-identity.js';
import { redactedConnect } from '../src/security/connect-redaction.js';
import { ErrorRateBound } from '../src/security/error-rate-bound.js';

const HASH = bcrypt.hashSync('s3cret', 4);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const auths: ClientAuth[] = [];
function auth(...args: ConstructorParameters<typeof ClientAuth>): ClientAuth {
  const a = new ClientAuth(...args);
  auths.push(a);
  return a;
}
afterAll(async () => {
  await Promise.all(auths.map((a) => a.close()));
});

describe('ClientAuth', () => {
  it('no authorization: everyone, unrestricted', () => {
    const a = auth(undefined);
    expect(a.required).toBe(false);
    expect(a.check({})).toEqual({ user: '', permissions: null });
  });

  it('plain passwords answer synchronously', () => {
    const a = auth({ users: [{ user: 'u', password: 'p' }] });
    expect(a.check({ user: 'u', pass: 'p' })).toMatchObject({ user: 'u', permissions: null });
    expect(a.check({ user: 'u', pass: 'x' })).toBeNull();
    expect(a.check({ user: 'nobody', pass: 'p' })).toBeNull();
    expect(a.check({ user: 'u' })).toBeNull();
  });

  it('bcrypt passwords answer through a promise, off the event loop', async () => {
    const a = auth({ users: [{ user: 'u', password: HASH }] });
    const ok = a.check({ user: 'u', pass: 's3cret' });
    expect(ok).toBeInstanceOf(Promise);
    expect(await ok).toMatchObject({ user: 'u' });
    expect(await a.check({ user: 'u', pass: 'wrong' })).toBeNull();
    // a verified password is remembered: the next check is synchronous
    expect(a.check({ user: 'u', pass: 's3cret' })).toMatchObject({ user: 'u' });
  });

  it('tokens, plain and bcrypt', async () => {
    expect(auth({ token: 't' }).check({ auth_token: 't' })).toEqual({ user: '', permissions: null });
    expect(auth({ token: 't' }).check({ auth_token: 'x' })).toBeNull();
    const hashed = auth({ token: bcrypt.hashSync('tok', 4) });
    expect(await hashed.check({ auth_token: 'tok' })).toEqual({ user: '', permissions: null });
    expect(await hashed.check({ auth_token: 'nope' })).toBeNull();
  });

  it('users get their own permissions, or the default ones; one compiled object per user', () => {
    const a = auth({
      defaultPermissions: { publish: { allow: ['def.>'] } },
      users: [
        { user: 'own', password: 'p', permissions: { publish: { allow: ['own.>'] } } },
        { user: 'dflt', password: 'p' },
      ],
    });
    const own = a.check({ user: 'own', pass: 'p' }) as { permissions: { canPublish(s: string): boolean } };
    const own2 = a.check({ user: 'own', pass: 'p' }) as { permissions: unknown };
    expect(own.permissions).toBe(own2.permissions);
    expect(own.permissions.canPublish('own.x')).toBe(true);
    expect(own.permissions.canPublish('def.x')).toBe(false);
    const dflt = a.check({ user: 'dflt', pass: 'p' }) as { permissions: { canPublish(s: string): boolean } };
    expect(dflt.permissions.canPublish('def.x')).toBe(true);
  });

  it('verify_and_map: the certificate identity picks the user, CONNECT credentials are not needed', () => {
    const a = auth(
      { users: [{ user: 'alice@example.com', password: '' }, { user: 'CN=bob,O=Acme', password: '' }] },
      { certFile: 'c', keyFile: 'k', verify: true, verifyAndMap: true, timeoutMs: 2000 },
    );
    expect(a.mapsCertificates).toBe(true);
    expect(a.check({}, ['alice@example.com', 'CN=alice'])).toMatchObject({ user: 'alice@example.com' });
    expect(a.check({}, ['CN=bob,O=Acme'])).toMatchObject({ user: 'CN=bob,O=Acme' });
    expect(a.check({ user: 'alice@example.com', pass: '' }, ['CN=mallory'])).toBeNull();
    expect(a.check({}, null)).toBeNull();
  });
});

describe('BcryptVerifier', () => {
  it('recognises the hash prefixes nats-server accepts', () => {
    expect(isBcryptHash('$2a$11$abc')).toBe(true);
    expect(isBcryptHash('$2b$04$abc')).toBe(true);
    expect(isBcryptHash('$2y$10$abc')).toBe(true);
    expect(isBcryptHash('$2x$10$abc')).toBe(true);
    expect(isBcryptHash('$1$abc')).toBe(false);
    expect(isBcryptHash('plain')).toBe(false);
  });

  it('checks many passwords without blocking the event loop the way synchronous checks would', async () => {
    const v = new BcryptVerifier();
    v.warm();
    const hash = bcrypt.hashSync('pw', 9);
    const t0 = performance.now();
    bcrypt.compareSync('pw', hash);
    const oneSyncCheckMs = performance.now() - t0;
    let maxGapMs = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
    }, 5);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => v.verify(i % 2 === 0 ? 'pw' : `bad${i}`, hash)));
    clearInterval(ticker);
    await v.close();
    expect(results).toEqual([true, false, true, false, true, false, true, false]);
    // Eight synchronous checks would stall the loop for 8 x oneSyncCheckMs; the worker keeps it turning.
    expect(maxGapMs).toBeLessThan(4 * oneSyncCheckMs);
  });

  it('stays bounded: when 256 checks wait, the oldest waiting one is refused at once', async () => {
    const v = new BcryptVerifier(1);
    const hash = bcrypt.hashSync('pw', 4);
    const pending = Array.from({ length: 300 }, (_, i) => v.verify(`bad${i}`, hash));
    expect(v.queued).toBe(257); // 256 waiting + 1 running
    // check 0 runs; checks 1..43 were the oldest waiting when 257..299 arrived
    const early = await Promise.race([Promise.all(pending.slice(1, 44)), sleep(5_000).then(() => 'late')]);
    expect(early).toEqual(Array.from({ length: 43 }, () => false));
    expect(await Promise.all(pending)).toEqual(Array.from({ length: 300 }, () => false));
    await v.close();
  });

  it('drops a check whose deadline passed before a worker was free, even with the right password', async () => {
    const v = new BcryptVerifier(1);
    const hash = bcrypt.hashSync('pw', 4);
    const first = v.verify('bad', hash); // occupies the only worker while it starts (hundreds of ms)
    const late = v.verify('pw', hash, { deadlineMs: Date.now() + 1 });
    expect(await late).toBe(false);
    expect(await first).toBe(false);
    expect(await v.verify('pw', hash)).toBe(true);
    await v.close();
  });

  it('serves sources in turn, newest first: one address flooding does not starve another', async () => {
    const v = new BcryptVerifier(1);
    const hash = bcrypt.hashSync('pw', 4);
    const order: string[] = [];
    const flood = Array.from({ length: 20 }, (_, i) =>
      Promise.resolve(v.verify(`bad${i}`, hash, { source: '10.0.0.1' })).then(() => order.push(`flood${i}`)),
    );
    const right = Promise.resolve(v.verify('pw', hash, { source: '10.0.0.2' })).then((ok) => order.push(`right:${ok}`));
    await Promise.all([...flood, right]);
    // flood0 was running; then the flood's newest (flood19), then the other address
    expect(order.slice(0, 3)).toEqual(['flood0', 'flood19', 'right:true']);
    await v.close();
  });

  it('keeps a worker free for other addresses: one address holds at most all workers but one', async () => {
    const v = new BcryptVerifier(2);
    const hash = bcrypt.hashSync('pw', 4);
    const flood = Array.from({ length: 10 }, (_, i) => v.verify(`bad${i}`, hash, { source: '10.0.0.1' }));
    expect(v.runningSources).toEqual(['10.0.0.1']); // two workers, but the flood gets one
    const right = v.verify('pw', hash, { source: '10.0.0.2' });
    expect(v.runningSources.sort()).toEqual(['10.0.0.1', '10.0.0.2']); // started at once on the free one
    expect(await right).toBe(true);
    expect(await Promise.all(flood)).toEqual(Array.from({ length: 10 }, () => false));
    await v.close();
  });

  it('runs identical checks once and remembers refused and verified pairs', async () => {
    const v = new BcryptVerifier(1);
    const hash = bcrypt.hashSync('pw', 4);
    const a = v.verify('bad', hash);
    const b = v.verify('bad', hash);
    expect(v.queued).toBe(1);
    expect(await Promise.all([a, b])).toEqual([false, false]);
    expect(v.verify('bad', hash)).toBe(false); // answered without a worker
    expect(await v.verify('pw', hash)).toBe(true);
    expect(v.verify('pw', hash)).toBe(true);
    await v.close();
  });
});

describe('certificate identities (verify_and_map)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-cert-id-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function selfSigned(subject: string, ext: string | null): X509Certificate {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', subject];
    if (ext !== null) {
      writeFileSync(join(dir, 'ext.cnf'), ext);
      args.push('-addext', ext);
    }
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    return new X509Certificate(readFileSync(join(dir, 'c.pem')));
  }

  it('e-mail SANs, then DNS SANs, then the subject as Go prints it', () => {
    const cert = selfSigned('/C=US/O=Acme/OU=Ops/CN=alice', 'subjectAltName=DNS:alice.acme.test,email:alice@acme.test');
    expect(certificateIdentities(cert)).toEqual(['alice@acme.test', 'alice.acme.test', 'CN=alice,OU=Ops,O=Acme,C=US']);
  });

  it('a certificate without SANs maps by subject only', () => {
    expect(certificateIdentities(selfSigned('/O=Acme/CN=bob', null))).toEqual(['CN=bob,O=Acme']);
    expect(certificateIdentities(undefined)).toEqual([]);
  });
});

describe('redactedConnect', () => {
  it('replaces pass, auth_token, sig and jwt as nats-server does', () => {
    const text = redactedConnect({ user: 'u', pass: 'p', auth_token: 't', sig: 's', jwt: 'j', name: 'n' });
    expect(JSON.parse(text)).toEqual({ user: 'u', pass: '[REDACTED]', auth_token: '[REDACTED]', sig: '[REDACTED]', jwt: '[REDACTED]', name: 'n' });
  });

  it('leaves a CONNECT without secrets as it is', () => {
    expect(redactedConnect({ verbose: false, name: 'x' })).toBe('{"verbose":false,"name":"x"}');
  });
});

describe('ErrorRateBound', () => {
  it('allows maxPerSecond events per one-second window', () => {
    const b = new ErrorRateBound(3);
    expect([b.exceeded(1000), b.exceeded(1001), b.exceeded(1002), b.exceeded(1003)]).toEqual([false, false, false, true]);
    expect(b.exceeded(2001)).toBe(false); // a new window
  });
});
