// The power-loss simulation itself: a crash after the disk did a rename but before its callback ran
// (libuv's thread finished it; the callback waits for the next poll phase) must not read the new file's
// bytes as unsynced changes of the file it replaced (a torn mix of the two: a flushed consumer state lost).
import * as fs from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { crash, forgetRoot, registerRoot, simTmpBase } from './support/power-loss-fs.js';

/** Rename callbacks are held until release(): the rename is on disk, its callback not yet run. */
const held: Array<() => void> = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const holding = {
    ...real,
    rename: (from: fs.PathLike, to: fs.PathLike, cb: (err: NodeJS.ErrnoException | null) => void) =>
      real.rename(from, to, (err) => held.push(() => cb(err))),
  };
  return (await import('./support/power-loss-fs.js')).wrapFs(holding as typeof real);
});
vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('./support/power-loss-fs.js')).wrapFsPromises(await importOriginal()),
);

const cb = <T>(f: (done: (err: Error | null, v?: T) => void) => void): Promise<T> =>
  new Promise((res, rej) => f((err, v) => (err ? rej(err) : res(v as T))));

async function writeSynced(path: string, text: string): Promise<void> {
  const fd = await cb<number>((d) => fs.open(path, 'w', d));
  await cb((d) => fs.write(fd, Buffer.from(text), 0, text.length, null, (e) => d(e)));
  await cb((d) => fs.fdatasync(fd, d));
  await cb((d) => fs.close(fd, d));
}

describe('power-loss fs: a rename on disk whose callback has not run', () => {
  const bases: string[] = [];
  afterAll(async () => {
    for (const b of bases) await rm(b, { recursive: true, force: true });
  });

  it.each(['torn', 'scrambled', 'synced-only'] as const)('a crash keeps the replaced file whole (%s)', async (mode) => {
    const base = await mkdtemp(join(simTmpBase(tmpdir()), 'flotilla-powerloss-rename-'));
    bases.push(base);
    const root = join(base, 'r');
    await mkdir(root);
    registerRoot(root);
    const old = JSON.stringify({ floor: 11 });
    const next = JSON.stringify({ floor: 99 });
    await writeSynced(join(root, 'state.json.tmp'), old);
    const renamed = cb((d) => fs.rename(join(root, 'state.json.tmp'), join(root, 'state.json'), d));
    while (held.length === 0) await new Promise((r) => setTimeout(r, 1));
    held.shift()!();
    await renamed;
    const dirFd = await cb<number>((d) => fs.open(root, 'r', d));
    await cb((d) => fs.fsync(dirFd, d));
    await cb((d) => fs.close(dirFd, d));
    // state.json is durable with `old`; the next state is synced in the temp file and renamed over it.
    await writeSynced(join(root, 'state.json.tmp'), next);
    const renaming = cb((d) => fs.rename(join(root, 'state.json.tmp'), join(root, 'state.json'), d));
    while (held.length === 0) await new Promise((r) => setTimeout(r, 1));
    // On disk now, the callback held: the crash comes first. The directory was not fsynced: the old file.
    const [image] = crash([root], mode, () => 0.99);
    held.shift()!();
    await renaming;
    expect(await readFile(join(image.dir, 'state.json'), 'utf8')).toBe(old);
    forgetRoot(image.dir);
  });
});
