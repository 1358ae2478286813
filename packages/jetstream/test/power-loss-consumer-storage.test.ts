// FileConsumerStorage (temp file, fdatasync, rename) through simulated power cuts
// (packages/store/test/support/power-loss-fs.ts): a saved meta and every flushed state survive.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FileConsumerStorage, readConsumerFiles, type ConsumerMeta } from '../src/consumer/consumer-storage.js';
import type { ConsumerStateSnapshot } from '../src/consumer/consumer-state.js';
import { crash, forgetRoot, prng, registerRoot, simTmpBase, type CrashMode } from '../../store/test/support/power-loss-fs.js';

vi.mock('node:fs', async (importOriginal) => (await import('../../store/test/support/power-loss-fs.js')).wrapFs(await importOriginal()));
vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('../../store/test/support/power-loss-fs.js')).wrapFsPromises(await importOriginal()),
);

const CRASHES = 100;
const SEED = Number(process.env.POWER_LOSS_SEED ?? 0xc0de);
const MODES: CrashMode[] = ['synced-only', 'torn', 'scrambled', 'everything'];
const META = { stream_name: 'S', name: 'C', created: '2026-01-01T00:00:00Z', config: {} } as unknown as ConsumerMeta;
const stateAt = (floor: number): ConsumerStateSnapshot => ({
  delivered: { consumer_seq: floor, stream_seq: floor },
  ack_floor: { consumer_seq: floor, stream_seq: floor },
  pending: [],
  redelivered: [],
});

describe('FileConsumerStorage under simulated power loss', () => {
  const bases: string[] = [];
  afterAll(async () => {
    for (const b of bases) await rm(b, { recursive: true, force: true });
  });

  it(`keeps the saved meta and the last flushed state through ${CRASHES} power cuts`, async () => {
    const rand = prng(SEED);
    const base = await mkdtemp(join(simTmpBase(tmpdir()), 'flotilla-powerloss-consumer-'));
    bases.push(base);
    let root = join(base, 'r');
    await mkdir(root);
    registerRoot(root);
    let floor = 0;
    /** The ack floor of the last flush that resolved before the crash; -1: no meta saved yet. */
    let flushedFloor = -1;
    /** Crashes that lost a state change never flushed: the simulation bit. */
    let lostUnflushed = 0;
    for (let c = 0; c < CRASHES; c++) {
      const label = `seed ${SEED} (POWER_LOSS_SEED) crash ${c}`;
      let crashed = false;
      const storage = new FileConsumerStorage(join(root, 'consumer'), () => stateAt(floor), () => undefined);
      const saved = storage.saveMeta(META).then(() => {
        if (!crashed && flushedFloor < 0) flushedFloor = 0;
      });
      const steps = 1 + Math.floor(rand() * 20);
      for (let i = 0; i < steps; i++) {
        floor++;
        storage.stateChanged();
        if (rand() < 0.4) {
          const at = floor;
          void Promise.all([saved, storage.flush()]).then(() => {
            if (!crashed) flushedFloor = Math.max(flushedFloor, at);
          });
        }
        if (rand() < 0.5) await new Promise((res) => setImmediate(res));
        else if (rand() < 0.3) await new Promise((res) => setTimeout(res, 1));
      }
      crashed = true;
      const mode = MODES[Math.floor(rand() * MODES.length)];
      const [image] = crash([root], mode, rand);
      storage.abandon();
      await saved.catch(() => undefined);
      // The abandoned storage's write in progress still creates files in the old directory: let it end
      // first, or the rm below fails (ENOTEMPTY) when a file appears while it walks the tree.
      await storage.close();
      await rm(root, { recursive: true, force: true });
      root = image.dir;
      const files = await readConsumerFiles(join(root, 'consumer'));
      if (flushedFloor >= 0) {
        expect(files, `${label} [${mode}]: saved meta lost`).not.toBeNull();
        expect(files!.meta.name).toBe('C');
      }
      if (flushedFloor > 0) {
        expect(files!.state, `${label} [${mode}]: flushed state lost`).not.toBeNull();
        const got = files!.state!.ack_floor?.stream_seq;
        expect(typeof got, `${label} [${mode}]: state.json is not a state: ${JSON.stringify(files!.state)}`).toBe('number');
        expect(got, `${label} [${mode}]: ack floor went back`).toBeGreaterThanOrEqual(flushedFloor);
      }
      if ((files?.state?.ack_floor?.stream_seq ?? -1) < floor) lostUnflushed++;
      // What came back is on disk: the next life starts from it.
      floor = files?.state?.ack_floor.stream_seq ?? floor;
      flushedFloor = files === null ? -1 : (files.state?.ack_floor.stream_seq ?? 0);
    }
    expect(lostUnflushed, 'no crash lost an unflushed write: the simulation did not bite').toBeGreaterThan(0);
    forgetRoot(root);
  });
});
