// A flood of wrong bcrypt passwords must not lock out the user who knows the right one: during a burst of
// 300 CONNECTs with distinct wrong passwords (and during a sustained flood from another address), a
// client with the right password gets PONG, not 'Authentication Timeout' or 'Authorization Violation'.
// The time it took is printed (measured, not asserted: the server's own auth timeout is the bound).
// nats-server 2.9.10 (E2E_SERVER=nats-server) passes the burst (1.1 s) but not the sustained flood: there the
// requirement is Flotilla's own (issue 15), met by scheduling checks per client address.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';

// Cost 8: a few ms to tens of ms per check, so 256 queued wrong checks already outlast the 2 s auth timeout
// with one verifier, while the test stays fast.
const RIGHT_PASSWORD = 'the-right-one';
const HASH = bcrypt.hashSync(RIGHT_PASSWORD, 8);
const BURST = 300;

const dir = mkdtempSync(join(tmpdir(), 'flotilla-bcrypt-flood-'));
const servers: FlotillaProcess[] = [];
const sockets: Socket[] = [];
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function startWithBcryptUser(): Promise<FlotillaProcess> {
  const conf = join(dir, `auth-${servers.length}.conf`);
  writeFileSync(conf, `authorization { timeout: 2, users: [ { user: app, password: "${HASH}" } ] }\n`);
  const server = await startServer({ args: ['-c', conf] });
  servers.push(server);
  return server;
}

/** Connects, waits for INFO, sends CONNECT + PING; resolves with what the server answered first. */
function attempt(port: number, password: string, localAddress = '127.0.0.1'): Promise<{ answer: string; ms: number }> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port, localAddress });
    sockets.push(socket);
    let text = '';
    let sentAt = 0;
    const done = (answer: string): void => {
      socket.destroy();
      resolve({ answer, ms: Date.now() - sentAt });
    };
    socket.on('error', () => done('socket error'));
    socket.on('close', () => done(text.includes('-ERR') ? /-ERR [^\r]*/.exec(text)![0] : 'closed'));
    socket.on('data', (d: Buffer) => {
      const before = text;
      text += d.toString('latin1');
      if (!before.includes('\r\n') && text.includes('\r\n')) {
        sentAt = Date.now();
        socket.write(`CONNECT {"verbose":false,"pedantic":false,"user":"app","pass":${JSON.stringify(password)}}\r\nPING\r\n`);
      }
      if (/\r\nPONG\r\n/.test(text)) done('PONG');
      else if (/-ERR [^\r]*\r\n/.test(text.slice(text.indexOf('\r\n') + 2))) done(/-ERR [^\r]*/.exec(text)![0]);
    });
  });
}

function report(label: string, r: { answer: string; ms: number }): void {
  process.stdout.write(`[bcrypt flood] ${label}: ${r.answer} after ${r.ms} ms\n`);
}

describe('bcrypt checks under a flood of wrong passwords', () => {
  it('after a burst of 300 wrong passwords from the same address, the right password still gets in', async () => {
    const server = await startWithBcryptUser();
    const flood = Array.from({ length: BURST }, (_, i) => attempt(server.port, `wrong-${i}`));
    await sleep(200); // the burst's CONNECTs are in
    const right = await attempt(server.port, RIGHT_PASSWORD);
    report('right user after a burst of 300, same address', right);
    expect(right.answer).toBe('PONG');
    const answers = await Promise.all(flood);
    // every wrong attempt is refused, none gets in
    expect(answers.filter((a) => a.answer === 'PONG')).toEqual([]);
  });

  it('during a sustained flood from another address, the right password still gets in', async () => {
    const server = await startWithBcryptUser();
    let flooding = true;
    const flood: Array<Promise<{ answer: string; ms: number }>> = [];
    const floodLoop = (async () => {
      for (let i = 0; flooding && i < 2_000; i++) {
        flood.push(attempt(server.port, `wrong-${i}`));
        if (i >= BURST && i % 20 === 0) await sleep(50); // ~400 more per second after the burst
      }
    })();
    await sleep(500);
    const right = await attempt(server.port, RIGHT_PASSWORD, '127.0.0.2');
    flooding = false;
    await floodLoop;
    report(`right user during a sustained flood (${flood.length} wrong attempts), another address`, right);
    expect(right.answer).toBe('PONG');
    const answers = await Promise.all(flood);
    expect(answers.filter((a) => a.answer === 'PONG')).toEqual([]);
  });
});
