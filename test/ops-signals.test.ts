// Signals a NATS operator sends to a running server: SIGUSR1 reopens the log file (nats-server's
// logrotate signal) and must never open Node's inspector; SIGHUP reloads the config (ops-reload.test.ts)
// and must not end the process, even without a config file to reload. Each test sends the signal to a
// real flotilla process and checks that it keeps serving.
// The inspector port is set per process (NODE_OPTIONS=--inspect-port) to a port this test picked, so
// the check cannot collide with another process's 9229.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { sleep, startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { untilEvery } from './helpers/until.js';

/** Polls every 20 ms, as this file was written with. */
const until = untilEvery(20);

const servers: FlotillaProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** true when something accepts TCP connections on 127.0.0.1:port */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function start(args: string[] = []): Promise<{ server: FlotillaProcess; inspectorPort: number }> {
  const inspectorPort = await freePort();
  const server = await startFlotilla({ args, env: { NODE_OPTIONS: `--inspect-port=127.0.0.1:${inspectorPort}` } });
  servers.push(server);
  return { server, inspectorPort };
}

/** A request answered through the server, on a connection made before the signal. */
async function roundTrip(nc: NatsConnection, subject: string): Promise<string> {
  const reply = await nc.request(subject, 'ping', { timeout: 2_000 });
  return reply.string();
}

function echo(nc: NatsConnection, subject: string): void {
  nc.subscribe(subject, { callback: (_err, m) => m.respond(`echo ${m.string()}`) });
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe.concurrent('operator signals', () => {
  it('SIGUSR1 never opens a debugger, logs that there is no log file to reopen, and the server keeps serving', async () => {
    const { server, inspectorPort } = await start();
    const nc = await connect({ servers: server.url });
    echo(nc, 'sig.usr1');
    await nc.flush();
    for (let i = 1; i <= 2; i++) {
      server.proc.kill('SIGUSR1');
      await until(() => occurrences(server.output(), 'log file reopen ignored') >= i || /Debugger listening/.test(server.output()), 5_000, 'the reopen log line');
    }
    expect(server.output()).not.toMatch(/Debugger listening|inspector/i);
    expect(await listening(inspectorPort)).toBe(false);
    expect(await roundTrip(nc, 'sig.usr1')).toBe('echo ping');
    const fresh = await connect({ servers: server.url });
    expect(await roundTrip(fresh, 'sig.usr1')).toBe('echo ping');
    await fresh.close();
    await nc.close();
    expect(server.proc.exitCode).toBeNull();
  });

  it('SIGUSR1 reopens the log file after logrotate moved it', async () => {
    const { server, inspectorPort } = await start(['-l', 'flotilla.log']);
    const logFile = join(server.dir, 'flotilla.log');
    await until(() => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('server is ready'), 5_000, 'the log file');
    renameSync(logFile, `${logFile}.1`);
    server.proc.kill('SIGUSR1');
    await until(() => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('log file reopened'), 5_000, 'a new log file');
    expect(readFileSync(`${logFile}.1`, 'utf8')).toContain('server is ready');
    expect(readFileSync(logFile, 'utf8')).not.toContain('server is ready');
    expect(server.output()).not.toMatch(/Debugger listening|inspector/i);
    expect(await listening(inspectorPort)).toBe(false);
    const nc = await connect({ servers: server.url });
    echo(nc, 'sig.rotate');
    expect(await roundTrip(nc, 'sig.rotate')).toBe('echo ping');
    await nc.close();
  });

  it('SIGHUP without a config file does not end the process: the reload fails with nats-server\'s reason, clients stay connected, SIGTERM still stops it cleanly', async () => {
    const { server } = await start();
    const nc = await connect({ servers: server.url });
    echo(nc, 'sig.hup');
    await nc.flush();
    server.proc.kill('SIGHUP');
    const why = 'Failed to reload server configuration: can only reload config when a file is provided using -c or --config';
    await until(() => server.output().includes(why) || server.proc.exitCode !== null || server.proc.signalCode !== null, 5_000, 'the SIGHUP log line');
    expect(server.output()).toContain(why);
    expect(server.proc.signalCode).toBeNull();
    expect(server.proc.exitCode).toBeNull();
    expect(await roundTrip(nc, 'sig.hup')).toBe('echo ping');
    await nc.close();
    expect(await server.stop()).toBe(0);
  });
});
