// A single node that runs out of file descriptors while creating streams: the create that cannot open its
// files fails with 500/10049 and takes nothing else down: every existing stream keeps taking publishes and
// new clients still connect. The limit is lowered on the running process with prlimit(1).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, StorageType, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

const cleanups: Array<() => Promise<unknown> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
});

describe.skipIf(AGAINST_NATS_SERVER)('stream create out of file descriptors', () => {
  it('fails that create with 10049; existing streams keep serving and new clients connect', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'flotilla-emfile-'));
    cleanups.push(() => rmSync(storeDir, { recursive: true, force: true }));
    const server: FlotillaProcess = await startFlotilla({ args: ['-js', '-sd', storeDir] });
    cleanups.push(() => server.stop());
    const nc: NatsConnection = await connect({ servers: server.url, reconnect: false });
    cleanups.push(() => nc.close());
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await jsm.streams.add({ name: 'BEFORE', subjects: ['before.>'], storage: StorageType.File });
    expect((await js.publish('before.x', 'one')).seq).toBe(1);

    const pid = server.proc.pid!;
    const open = readdirSync(`/proc/${pid}/fd`).length;
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${open + 40}:${open + 40}`]);

    const created: string[] = [];
    let refusal: { code: number; err_code: number; description: string } | undefined;
    for (let i = 0; i < 100 && refusal === undefined; i++) {
      const name = `S${i}`;
      await jsm.streams.add({ name, subjects: [`s${i}.>`], storage: StorageType.File }).then(
        () => created.push(name),
        (e: { api_error?: { code: number; err_code: number; description: string } }) => {
          refusal = e.api_error;
        },
      );
    }
    expect(refusal).toMatchObject({ code: 500, err_code: 10049 });
    expect(refusal!.description).toContain('too many open files');
    const failedName = `S${created.length}`;
    // The failed stream does not exist.
    const info = await jsm.streams.info(failedName).then(
      () => null,
      (e: { api_error?: { err_code: number } }) => e.api_error?.err_code,
    );
    expect(info).toBe(10059);

    // Every existing stream still takes publishes.
    const acks: unknown[] = [];
    for (const [subject, stream] of [['before.x', 'BEFORE'], ...created.map((name, i) => [`s${i}.x`, name])] as const) {
      acks.push(
        await js.publish(subject, 'two').then(
          (a) => ({ stream: a.stream, seq: a.seq }),
          (e: { api_error?: unknown }) => ({ stream, error: e.api_error }),
        ),
      );
    }
    expect(acks).toEqual([{ stream: 'BEFORE', seq: 2 }, ...created.map((name) => ({ stream: name, seq: 1 }))]);
    // A new client connects and reads.
    const other = await connect({ servers: server.url, reconnect: false });
    cleanups.push(() => other.close());
    const read = await (await other.jetstreamManager()).streams.getMessage('BEFORE', { seq: 2 });
    expect(read.string()).toBe('two');
  });
});
