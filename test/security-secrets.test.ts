// Secrets stay secret: with -DV trace logging to stdout and to a log file, a known password and a known
// token are used (rightly and wrongly, with the nats client and raw CONNECTs carrying every secret field);
// then the logs, the -ERRs the clients saw, and every monitoring endpoint are scanned for them.
// Deliberately stricter than nats-server 2.9.10, whose -V trace redacts only "pass" and prints
// "auth_token" in clear (so E2E_SERVER=nats-server fails here on the token; later versions redact it).
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsError } from 'nats';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';
import { RawClient } from './helpers/raw-client.js';

const PASSWORD = 'Kn0wn-Passw0rd-7319';
const TOKEN = 'Kn0wn-T0ken-5521';
const SIG = 'Kn0wn-Sig-8842';
const JWT = 'Kn0wn-Jwt-1177';
const SECRETS = [PASSWORD, TOKEN, SIG, JWT];

const CLEAN_EXITS = process.env['E2E_SERVER'] === 'nats-server' ? [0, 1] : [0];

async function monitoringText(s: FlotillaProcess): Promise<string> {
  const paths = ['/varz', '/connz', '/connz?subs=1', '/connz?state=closed', '/connz?state=all&auth=1', '/healthz', '/metrics', '/'];
  let text = '';
  for (const p of paths) {
    const res = await fetch(`http://127.0.0.1:${s.httpPort}${p}`);
    text += `${p}\n${await res.text()}\n`;
  }
  return text;
}

async function exercise(s: FlotillaProcess, creds: { user?: string; pass?: string; token?: string }): Promise<string> {
  let seen = '';
  // the nats client: right credentials, then wrong ones
  const nc = await connect({ servers: s.url, reconnect: false, ...creds });
  nc.subscribe('secret.>');
  nc.publish('secret.x', 'payload');
  nc.publish('denied.x', 'payload'); // a permission violation when the user has permissions
  await nc.flush();
  const wrong = await connect({ servers: s.url, reconnect: false, user: 'app', pass: `${PASSWORD}-wrong`, token: `${TOKEN}-wrong` }).catch(
    (e: NatsError) => e,
  );
  seen += String(wrong instanceof Error ? wrong.message : 'connected');
  // raw CONNECTs carrying every secret field nats-server redacts
  const raw = await RawClient.connect(s.port);
  raw.send(
    `CONNECT {"verbose":false,"user":"app","pass":"${PASSWORD}","auth_token":"${TOKEN}","sig":"${SIG}","jwt":"${JWT}"}\r\nPING\r\n`,
  );
  await raw.waitFor(/PONG|-ERR/);
  seen += raw.received;
  const bad = await RawClient.connect(s.port);
  bad.send(`CONNECT {"verbose":false,"user":"app","pass":"not-${PASSWORD}"}\r\nPING\r\n`);
  await bad.waitFor(/-ERR/);
  seen += bad.received;
  raw.close();
  bad.close();
  seen += await monitoringText(s); // while the connections are open
  await nc.close();
  await sleep(100);
  seen += await monitoringText(s); // and once they are closed
  return seen;
}

function expectNoSecrets(where: string, text: string): void {
  for (const secret of SECRETS) {
    const at = text.indexOf(secret);
    expect(at < 0 ? 'absent' : `${where} leaks ${secret}: ...${text.slice(Math.max(0, at - 80), at + 40)}...`).toBe('absent');
  }
}

describe('secrets never appear in logs, monitoring output or errors', () => {
  it('users with passwords, -DV to stdout and a log file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-secrets-'));
    const conf = join(dir, 'server.conf');
    const logFile = join(dir, 'server.log');
    writeFileSync(
      conf,
      `authorization {\n  users = [\n    { user: app, password: "${PASSWORD}", permissions: { publish: "secret.>", subscribe: "secret.>" } }\n  ]\n}\n`,
    );
    const s = await startServer({ args: ['-DV', '-c', conf] });
    const logged = await startServer({ args: ['-DV', '-l', logFile, '-c', conf] });
    try {
      const seen = await exercise(s, { user: 'app', pass: PASSWORD });
      const seenLogged = await exercise(logged, { user: 'app', pass: PASSWORD });
      await sleep(300); // let asynchronous log writes land
      const stdout = s.output();
      expect(stdout).toMatch(/CONNECT/); // the trace ran, so the scan means something
      expect(stdout).toMatch(/\[REDACTED\]/);
      expectNoSecrets('stdout log', stdout);
      expectNoSecrets('client-visible output', seen + seenLogged);
      expect(existsSync(logFile)).toBe(true);
      const fileLog = readFileSync(logFile, 'utf8');
      expect(fileLog).toMatch(/\[REDACTED\]/);
      expectNoSecrets('log file', fileLog + logged.output());
    } finally {
      expect(CLEAN_EXITS).toContain(await s.stop());
      expect(CLEAN_EXITS).toContain(await logged.stop());
    }
  });

  it('a token server, -DV', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-secrets-'));
    const conf = join(dir, 'server.conf');
    writeFileSync(conf, `authorization { token: "${TOKEN}" }\n`);
    const s = await startServer({ args: ['-DV', '-c', conf] });
    try {
      const seen = await exercise(s, { token: TOKEN });
      await sleep(300);
      expect(s.output()).toMatch(/\[REDACTED\]/);
      expectNoSecrets('stdout log', s.output());
      expectNoSecrets('client-visible output', seen);
    } finally {
      expect(CLEAN_EXITS).toContain(await s.stop());
    }
  });
});
