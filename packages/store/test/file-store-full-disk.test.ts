// A FileStore on a tiny tmpfs: a flush that fails for lack of space leaves nothing of itself visible, and
// the store takes writes again once space is back, with no reopen. Needs root (mount); skipped otherwise
// would hide a regression, so the test fails loudly when it cannot mount.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore, StoreError } from '@flotilla/store';

const mounted: string[] = [];
afterEach(async () => {
  for (const d of mounted.splice(0)) {
    try {
      execFileSync('umount', ['-l', d]);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  }
});

async function smallDisk(sizeMiB: number): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'flotilla-fulldisk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', d]);
  mounted.push(d);
  return d;
}

const payload = Buffer.alloc(2000, 7);

/** Appends in groups of 50 until a group has failures; returns the acknowledged sequences. */
async function fillUntilFull(store: FileStore): Promise<{ acked: number[]; refused: StoreError[] }> {
  const acked: number[] = [];
  const refused: StoreError[] = [];
  for (let round = 0; round < 1000 && refused.length === 0; round++) {
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => store.append('fill', undefined, payload)));
    for (const r of results) {
      if (r.status === 'fulfilled') acked.push(r.value.seq);
      else refused.push(r.reason as StoreError);
    }
  }
  return { acked, refused };
}

async function appendWhenSpace(store: FileStore): Promise<number> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      return (await store.append('after', undefined, payload)).seq;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw last;
}

describe('FileStore on a full disk', () => {
  it('a failed write leaves nothing visible and writes work again once space is freed', async () => {
    const dir = await smallDisk(4);
    const filler = join(dir, 'filler');
    await writeFile(filler, Buffer.alloc(1024 * 1024));
    const store = await FileStore.open({ dir: join(dir, 'store') });
    try {
      const { acked, refused } = await fillUntilFull(store);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toBeInstanceOf(StoreError);
      expect(refused[0]!.code).toBe('IO');
      expect(refused[0]!.message).toContain('no space left on device');
      expect(acked.length).toBeGreaterThan(100);
      const lastAcked = acked[acked.length - 1]!;
      expect(acked).toEqual(Array.from({ length: acked.length }, (_, i) => i + 1));

      // Recovery runs right after the failure; once it is done the view is what the disk holds.
      await expect.poll(() => store.state().last_seq, { timeout: 5000 }).toBe(lastAcked);
      expect(store.state().messages).toBe(acked.length);
      expect(await store.get(lastAcked + 1)).toBeNull();
      expect((await store.readRange(1, 100_000)).map((m) => m.seq)).toEqual(acked);

      await unlink(filler);
      const seq = await appendWhenSpace(store);
      expect(seq).toBe(lastAcked + 1);
      expect(store.state().messages).toBe(acked.length + 1);
    } finally {
      await store.close();
    }
    // And the disk agrees with what was acknowledged.
    const reopened = await FileStore.open({ dir: join(dir, 'store') });
    try {
      const st = reopened.state();
      expect(st.last_seq).toBe(st.messages);
      expect((await reopened.get(st.last_seq))?.subject).toBe('after');
    } finally {
      await reopened.close();
    }
  });

  it('with recoverFailedWrites false (a stream replica) every later write is refused until a reopen', async () => {
    const dir = await smallDisk(4);
    const filler = join(dir, 'filler');
    await writeFile(filler, Buffer.alloc(1024 * 1024));
    const store = await FileStore.open({ dir: join(dir, 'store'), recoverFailedWrites: false });
    let lastAcked = 0;
    try {
      const { acked, refused } = await fillUntilFull(store);
      expect(refused.length).toBeGreaterThan(0);
      lastAcked = acked[acked.length - 1]!;
      await unlink(filler);
      await new Promise((r) => setTimeout(r, 300));
      const err = await store.append('after', undefined, payload).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('IO');
    } finally {
      await store.close();
    }
    const reopened = await FileStore.open({ dir: join(dir, 'store') });
    try {
      expect(reopened.state().last_seq).toBe(lastAcked);
      expect((await reopened.append('after', undefined, payload)).seq).toBe(lastAcked + 1);
    } finally {
      await reopened.close();
    }
  });
});
