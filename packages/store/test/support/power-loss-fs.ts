/**
 * A power-loss simulation for tests: wraps `node:fs`, `node:fs/promises` and `level` (install with vi.mock,
 * see `installPowerLoss` in power-loss-mocks.ts) and keeps, for every file under a registered root, the
 * content it had at its last fsync/fdatasync (its "durable image") and the directory entries as of their
 * directory's last fsync. `crash(root)` then writes what a machine would find after a power cut into a new
 * directory: durable images only, or with unsynced sectors kept at random (torn writes), and files whose
 * creation was never made durable left out. The stores under test keep running on the old directory
 * (abandoned: the test closes them later); the test reopens from the new one.
 *
 * Rules (per the brief, strict where it matters):
 * - file data and size: durable at fsync/fdatasync of any descriptor of the file, or at once when written
 *   through an O_DSYNC/O_SYNC descriptor;
 * - create, rename, unlink: durable once the parent directory is fsynced;
 * - mkdir: durable at once (lenient: ext4 commits it with the next journal commit, which any later fsync
 *   inside it forces; the stores never fsync the parent of a directory they create);
 * - LevelDB (native, invisible to `fs`): its directory is copied after every `sync: true` batch/put and
 *   after open; a crash restores that copy (unsynced LevelDB writes lost) or, at random, the current files
 *   (they happened to reach the disk). LevelDB's own torn-log handling is not exercised beyond that.
 * Written bytes really go to the files (reads see the page cache, as in production); fsyncs are not
 * forwarded to the disk (the simulation needs none, and tests run faster).
 */
import type * as FsNs from 'node:fs';
import type * as FsPromisesNs from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { SeededRandom } from '@flotilla/raft';

type Fs = typeof FsNs;
type FsPromises = typeof FsPromisesNs;

interface Inode {
  /** Where the file lives now; null once unlinked or renamed over. */
  livePath: string | null;
  /** Content as of the last sync. */
  durable: Buffer;
  /** The real file's inode number (-1: unknown): a crash reads the content only from that file. */
  ino: number;
}

type DirOp = { kind: 'link'; path: string; inode: Inode } | { kind: 'unlink'; path: string };

interface OpenFd {
  inode: Inode | null;
  /** Set when the descriptor is a directory's. */
  dir: string | null;
  dsync: boolean;
}

/** How much of the unsynced state a crash keeps (see survivingContent). */
export type CrashMode = 'synced-only' | 'torn' | 'scrambled' | 'everything';

const SECTOR_BYTES = 512;

let real: Fs | null = null;
const roots = new Set<string>();
const live = new Map<string, Inode>();
const durableNs = new Map<string, Inode>();
const pendingByDir = new Map<string, DirOp[]>();
const dirs = new Set<string>();
const fds = new Map<number, OpenFd>();
/** LevelDB location -> its files as of its last synced write (null: never captured). */
const levelShadows = new Map<string, Map<string, Buffer> | null>();
let crashCounter = 0;

const fs = (): Fs => {
  if (real === null) throw new Error('power-loss fs: node:fs is not mocked (call vi.mock through installPowerLoss)');
  return real;
};

function underRoot(path: string): boolean {
  for (const r of roots) if (path === r || path.startsWith(r + sep)) return true;
  return false;
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

function inLevelDir(path: string): boolean {
  const d = dirname(path);
  return levelShadows.has(d);
}

function tracked(path: string): boolean {
  return underRoot(path) && !inLevelDir(path);
}

function pend(dir: string, op: DirOp): void {
  const list = pendingByDir.get(dir);
  if (list === undefined) pendingByDir.set(dir, [op]);
  else list.push(op);
}

function capture(inode: Inode): void {
  if (inode.livePath === null) return;
  try {
    inode.durable = fs().readFileSync(inode.livePath);
  } catch {
    // Gone from under us (a zombie store after a crash): nothing to capture.
  }
}

function syncDir(dir: string): void {
  const ops = pendingByDir.get(dir);
  if (ops === undefined) return;
  pendingByDir.delete(dir);
  for (const op of ops) {
    if (op.kind === 'link') durableNs.set(op.path, op.inode);
    else durableNs.delete(op.path);
  }
}

function onSync(fd: number): void {
  settleRenames();
  const o = fds.get(fd);
  if (o === undefined) return;
  if (o.dir !== null) syncDir(o.dir);
  else if (o.inode !== null) capture(o.inode);
}

function afterWrite(fd: number): void {
  const o = fds.get(fd);
  if (o !== undefined && o.dsync && o.inode !== null) capture(o.inode);
}

interface OpenIntent {
  path: string;
  existed: boolean;
  isDir: boolean;
  dsync: boolean;
}

function intentOf(path: FsNs.PathLike, flags: FsNs.OpenMode | undefined): OpenIntent | null {
  if (typeof path !== 'string') return null;
  const p = resolve(path);
  if (!underRoot(p)) return null;
  let isDir = false;
  let existed = false;
  try {
    const st = fs().statSync(p);
    existed = true;
    isDir = st.isDirectory();
  } catch {
    existed = false;
  }
  // Files directly in a LevelDB directory are LevelDB's (the Raft log's WAL directory sits in one).
  if (!isDir && inLevelDir(p)) return null;
  const c = fs().constants;
  const dsync = typeof flags === 'number' && (flags & (c.O_DSYNC | c.O_SYNC)) !== 0;
  return { path: p, existed, isDir, dsync };
}

function inoOf(fd: number, path: string): number {
  try {
    return fd >= 0 ? fs().fstatSync(fd).ino : fs().statSync(path).ino;
  } catch {
    return -1;
  }
}

function afterOpen(intent: OpenIntent | null, fd: number): void {
  if (intent === null) return;
  if (intent.isDir) {
    fds.set(fd, { inode: null, dir: intent.path, dsync: false });
    return;
  }
  let inode = live.get(intent.path);
  if (inode === undefined || !intent.existed) {
    inode = { livePath: intent.path, durable: Buffer.alloc(0), ino: inoOf(fd, intent.path) };
    const old = live.get(intent.path);
    if (old !== undefined) old.livePath = null;
    live.set(intent.path, inode);
    pend(dirname(intent.path), { kind: 'link', path: intent.path, inode });
  }
  fds.set(fd, { inode, dir: null, dsync: intent.dsync });
}

function afterRename(from: FsNs.PathLike, to: FsNs.PathLike): void {
  if (typeof from !== 'string' || typeof to !== 'string') return;
  const a = resolve(from);
  const b = resolve(to);
  const inode = live.get(a);
  if (inode === undefined || !tracked(b)) return;
  live.delete(a);
  const replaced = live.get(b);
  if (replaced !== undefined) replaced.livePath = null;
  live.set(b, inode);
  inode.livePath = b;
  pend(dirname(a), { kind: 'unlink', path: a });
  pend(dirname(b), { kind: 'link', path: b, inode });
}

/**
 * A rename whose callback has not run yet. The disk may already show it (libuv's thread did it; the
 * callback waits for the next poll phase), so a crash in that window must not read the new file's bytes
 * through the old inode's path: crash() and every sync settle the renames the disk already shows.
 */
interface RenameInFlight {
  from: string;
  to: string;
  /** The renamed file's inode number, to see whether `to` is it yet. */
  ino: number;
  settled: boolean;
}
const renamesInFlight = new Set<RenameInFlight>();

function renameStarting(from: FsNs.PathLike, to: FsNs.PathLike): RenameInFlight | null {
  if (typeof from !== 'string' || typeof to !== 'string' || !live.has(resolve(from))) return null;
  let ino: number;
  try {
    ino = fs().statSync(from).ino;
  } catch {
    return null;
  }
  const rec: RenameInFlight = { from, to, ino, settled: false };
  renamesInFlight.add(rec);
  return rec;
}

function renameDone(rec: RenameInFlight | null, err: unknown, from: FsNs.PathLike, to: FsNs.PathLike): void {
  if (rec !== null) renamesInFlight.delete(rec);
  if (!err && !(rec?.settled ?? false)) afterRename(from, to);
}

function settleRenames(): void {
  for (const rec of renamesInFlight) {
    if (rec.settled) continue;
    let ino: number;
    try {
      ino = fs().statSync(rec.to).ino;
    } catch {
      continue;
    }
    if (ino !== rec.ino) continue;
    rec.settled = true;
    afterRename(rec.from, rec.to);
  }
}

function afterUnlink(path: FsNs.PathLike): void {
  if (typeof path !== 'string') return;
  const p = resolve(path);
  for (const [q, inode] of [...live]) {
    if (!isInside(q, p)) continue;
    live.delete(q);
    inode.livePath = null;
    pend(dirname(q), { kind: 'unlink', path: q });
  }
  for (const d of [...dirs]) if (isInside(d, p)) dirs.delete(d);
}

function afterMkdir(path: FsNs.PathLike): void {
  if (typeof path !== 'string') return;
  const p = resolve(path);
  // Every level the call may have created (recursive), down from the first root containing it.
  for (let d = p; underRoot(d); d = dirname(d)) {
    dirs.add(d);
    if (roots.has(d)) break;
  }
}

// ---- the wrapped modules ----------------------------------------------------------------------------

type Cb = (...args: unknown[]) => void;

/** `node:fs` with the tracking hooks; everything not listed is the real function. */
export function wrapFs(r: Fs): Fs {
  real = r;
  const w: Record<string, unknown> = { ...r };
  w.open = (path: FsNs.PathLike, ...rest: unknown[]) => {
    const cb = rest.pop() as Cb;
    const flags = rest[0] as FsNs.OpenMode | undefined;
    const intent = intentOf(path, flags ?? 'r');
    (r.open as (...a: unknown[]) => void)(path, ...rest, (err: unknown, fd: number) => {
      if (!err) afterOpen(intent, fd);
      cb(err, fd);
    });
  };
  w.openSync = (path: FsNs.PathLike, flags?: FsNs.OpenMode, mode?: FsNs.Mode) => {
    const intent = intentOf(path, flags ?? 'r');
    const fd = r.openSync(path, flags, mode);
    afterOpen(intent, fd);
    return fd;
  };
  w.close = (fd: number, cb?: Cb) => {
    fds.delete(fd);
    r.close(fd, cb as (err: NodeJS.ErrnoException | null) => void);
  };
  w.closeSync = (fd: number) => {
    fds.delete(fd);
    r.closeSync(fd);
  };
  const fakeSync = (fd: number, cb: Cb): void => {
    if (!fds.has(fd)) {
      r.fsync(fd, cb as (err: NodeJS.ErrnoException | null) => void);
      return;
    }
    onSync(fd);
    setImmediate(() => cb(null));
  };
  w.fsync = fakeSync;
  w.fdatasync = fakeSync;
  w.fsyncSync = (fd: number) => (fds.has(fd) ? onSync(fd) : r.fsyncSync(fd));
  w.fdatasyncSync = (fd: number) => (fds.has(fd) ? onSync(fd) : r.fdatasyncSync(fd));
  w.write = (fd: number, ...rest: unknown[]) => {
    const cb = rest.pop() as Cb;
    (r.write as (...a: unknown[]) => void)(fd, ...rest, (err: unknown, ...out: unknown[]) => {
      if (!err) afterWrite(fd);
      cb(err, ...out);
    });
  };
  w.writeSync = (fd: number, ...rest: unknown[]) => {
    const n = (r.writeSync as (...a: unknown[]) => number)(fd, ...rest);
    afterWrite(fd);
    return n;
  };
  w.writevSync = (fd: number, bufs: NodeJS.ArrayBufferView[], pos?: number) => {
    const n = r.writevSync(fd, bufs, pos);
    afterWrite(fd);
    return n;
  };
  w.rename = (from: FsNs.PathLike, to: FsNs.PathLike, cb: Cb) => {
    const rec = renameStarting(from, to);
    r.rename(from, to, (err) => {
      renameDone(rec, err, from, to);
      cb(err);
    });
  };
  w.renameSync = (from: FsNs.PathLike, to: FsNs.PathLike) => {
    r.renameSync(from, to);
    afterRename(from, to);
  };
  w.unlink = (path: FsNs.PathLike, cb: Cb) =>
    r.unlink(path, (err) => {
      if (!err) afterUnlink(path);
      cb(err);
    });
  w.unlinkSync = (path: FsNs.PathLike) => {
    r.unlinkSync(path);
    afterUnlink(path);
  };
  w.mkdirSync = (path: FsNs.PathLike, opts?: FsNs.MakeDirectoryOptions) => {
    const out = r.mkdirSync(path, opts);
    afterMkdir(path);
    return out;
  };
  w.default = w;
  return w as unknown as Fs;
}

/** `node:fs/promises` with the tracking hooks; FileHandles come wrapped. */
export function wrapFsPromises(r: FsPromises): FsPromises {
  const w: Record<string, unknown> = { ...r };
  w.open = async (path: FsNs.PathLike, flags?: FsNs.OpenMode, mode?: FsNs.Mode) => {
    const intent = intentOf(path, flags ?? 'r');
    const fh = await r.open(path, flags, mode);
    afterOpen(intent, fh.fd);
    return wrapHandle(fh);
  };
  w.rename = async (from: FsNs.PathLike, to: FsNs.PathLike) => {
    const rec = renameStarting(from, to);
    try {
      await r.rename(from, to);
    } catch (err) {
      renameDone(rec, err, from, to);
      throw err;
    }
    renameDone(rec, null, from, to);
  };
  w.unlink = async (path: FsNs.PathLike) => {
    await r.unlink(path);
    afterUnlink(path);
  };
  w.rm = async (path: FsNs.PathLike, opts?: FsNs.RmOptions) => {
    await r.rm(path, opts);
    afterUnlink(path);
  };
  w.rmdir = async (path: FsNs.PathLike, opts?: FsNs.RmDirOptions) => {
    await r.rmdir(path, opts);
    afterUnlink(path);
  };
  w.mkdir = async (path: FsNs.PathLike, opts?: FsNs.MakeDirectoryOptions) => {
    const out = await r.mkdir(path, opts);
    afterMkdir(path);
    return out;
  };
  w.writeFile = async (path: FsNs.PathLike, ...rest: unknown[]) => {
    const intent = intentOf(path, 'w');
    await (r.writeFile as (...a: unknown[]) => Promise<void>)(path, ...rest);
    if (intent !== null && !intent.isDir) {
      // Modelled as open + write + close: the data is not synced.
      const fd = -1 - crashCounter;
      afterOpen(intent, fd);
      fds.delete(fd);
    }
  };
  w.default = w;
  return w as unknown as FsPromises;
}

function wrapHandle(fh: FsPromisesNs.FileHandle): FsPromisesNs.FileHandle {
  const fd = fh.fd;
  return new Proxy(fh, {
    get(target, prop) {
      if (prop === 'sync' || prop === 'datasync') {
        if (!fds.has(fd)) return target[prop].bind(target);
        return async () => {
          onSync(fd);
          await new Promise((res) => setImmediate(res));
        };
      }
      if (prop === 'close') {
        return async () => {
          fds.delete(fd);
          await target.close();
        };
      }
      if (prop === 'write' || prop === 'writev') {
        const f = target[prop] as (...a: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          const out = await f.apply(target, args);
          afterWrite(fd);
          return out;
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** `level` whose Level copies its directory after open and after every synced write. */
export function wrapLevel<M extends { Level: new (...args: never[]) => object }>(mod: M): M {
  const Base = mod.Level as unknown as new (location: string, options?: unknown) => LevelLike;
  class SimLevel extends Base {
    override async open(...args: unknown[]): Promise<void> {
      await super.open(...args);
      shadowLevel(this.location);
    }
    override batch(...args: unknown[]): unknown {
      const out = super.batch(...args);
      if (Array.isArray(args[0]) && isSync(args[1])) return (out as Promise<void>).then(() => shadowLevel(this.location));
      return out;
    }
    override put(...args: unknown[]): Promise<void> {
      const out = super.put(...args);
      if (isSync(args[2])) return out.then(() => shadowLevel(this.location));
      return out;
    }
  }
  return { ...mod, Level: SimLevel };
}

interface LevelLike {
  readonly location: string;
  open(...args: unknown[]): Promise<void>;
  batch(...args: unknown[]): unknown;
  put(...args: unknown[]): Promise<void>;
}

const isSync = (opts: unknown): boolean => typeof opts === 'object' && opts !== null && (opts as { sync?: boolean }).sync === true;

function shadowLevel(location: string): void {
  const loc = resolve(location);
  if (!underRoot(loc)) return;
  levelShadows.set(loc, copyLevelFiles(loc));
}

/**
 * LevelDB's files as they are now. A background compaction may delete files while they are read: then
 * the copy is retried (bounded), so the copy never lacks a file the MANIFEST it holds refers to.
 */
function copyLevelFiles(loc: string): Map<string, Buffer> {
  const f = fs();
  for (let attempt = 0; attempt < 100; attempt++) {
    const names = f.readdirSync(loc).sort();
    const files = new Map<string, Buffer>();
    let changed = false;
    for (const name of names) {
      try {
        const p = join(loc, name);
        if (f.statSync(p).isFile()) files.set(name, f.readFileSync(p));
      } catch {
        changed = true;
        break;
      }
    }
    if (!changed && f.readdirSync(loc).sort().join('/') === names.join('/')) return files;
  }
  throw new Error(`power-loss fs: LevelDB files of ${loc} kept changing while copied`);
}

// ---- roots and crashes ---------------------------------------------------------------------------

/** Tracks `root` (an existing directory): everything already in it counts as durable. */
export function registerRoot(root: string): void {
  const r = resolve(root);
  roots.add(r);
  const walk = (d: string): void => {
    dirs.add(d);
    for (const ent of fs().readdirSync(d, { withFileTypes: true })) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile() && !inLevelDir(p)) {
        const inode: Inode = { livePath: p, durable: fs().readFileSync(p), ino: fs().statSync(p).ino };
        live.set(p, inode);
        durableNs.set(p, inode);
      }
    }
  };
  walk(r);
}

/** Stops tracking `root` (after a crash, or at the end of a test). */
export function forgetRoot(root: string): void {
  const r = resolve(root);
  roots.delete(r);
  for (const m of [live, durableNs]) for (const p of [...m.keys()]) if (isInside(p, r)) m.delete(p);
  for (const d of [...pendingByDir.keys()]) if (isInside(d, r)) pendingByDir.delete(d);
  for (const d of [...dirs]) if (isInside(d, r)) dirs.delete(d);
  for (const l of [...levelShadows.keys()]) if (isInside(l, r)) levelShadows.delete(l);
}

export interface CrashReport {
  /** The directory holding what survived. */
  dir: string;
  /** Files of the old root left out (their creation was never durable). */
  lostFiles: number;
}

/**
 * Power loss on every directory in `rootsToCrash` (a root, or a directory inside one: one node of several)
 * at this instant: call it synchronously, between two awaits of the code under test. Returns, per
 * directory, a new sibling directory (`<name>~<n>`) with what the disk holds, tracked as a root; the old
 * directories are no longer tracked. `rand` is a seeded [0, 1) generator.
 */
export function crash(rootsToCrash: readonly string[], mode: CrashMode, rand: () => number): CrashReport[] {
  const f = fs();
  const out: CrashReport[] = [];
  const newLevelDirs: string[] = [];
  settleRenames();
  for (const root of rootsToCrash) {
    const r = resolve(root);
    if (!underRoot(r)) throw new Error(`power-loss fs: ${r} is not inside a registered root`);
    const target = `${r.replace(/~\d+$/, '')}~${++crashCounter}`;
    const map = (p: string): string => join(target, relative(r, p));
    f.mkdirSync(target, { recursive: true });
    for (const d of dirs) if (isInside(d, r)) f.mkdirSync(map(d), { recursive: true });
    let lostFiles = 0;
    for (const [p, inode] of live) if (isInside(p, r) && durableNs.get(p) !== inode) lostFiles++;
    // `everything` is the page cache (kill -9): the directories as they are now.
    const entries = mode === 'everything' ? live : durableNs;
    if (mode === 'everything') lostFiles = 0;
    for (const [p, inode] of entries) {
      if (!isInside(p, r)) continue;
      f.mkdirSync(dirname(map(p)), { recursive: true });
      f.writeFileSync(map(p), survivingContent(inode, mode, rand));
    }
    for (const [loc, shadow] of levelShadows) {
      if (!isInside(loc, r)) continue;
      const dest = map(loc);
      newLevelDirs.push(dest);
      f.mkdirSync(dest, { recursive: true });
      const useCurrent = shadow === null || mode === 'everything' || (mode !== 'synced-only' && rand() < 0.3);
      const files = useCurrent ? (f.existsSync(loc) ? copyLevelFiles(loc) : new Map<string, Buffer>()) : shadow;
      for (const [name, bytes] of files) f.writeFileSync(join(dest, name), bytes);
    }
    forgetRoot(r);
    out.push({ dir: target, lostFiles });
  }
  // Registered only after every crash image is written: the new roots start out fully durable.
  for (const l of newLevelDirs) levelShadows.set(l, null);
  for (const c of out) registerRoot(c.dir);
  return out;
}

/**
 * The file's content after the crash: its durable image, plus some of the unsynced changes. `torn`: a random
 * prefix of them in file order, cut at any byte (writeback in order, the last page torn). `scrambled`: each
 * 512-byte sector old or new at random and the size anywhere between (writeback in any order).
 */
function survivingContent(inode: Inode, mode: CrashMode, rand: () => number): Buffer {
  const durable = inode.durable;
  if (mode === 'synced-only' || inode.livePath === null) return durable;
  let current: Buffer;
  // Read through a descriptor whose inode is checked: a rename on disk whose callback has not run (not
  // settled, or done by libuv's thread while this runs) may have put another file under the name.
  let fd = -1;
  try {
    fd = fs().openSync(inode.livePath, 'r');
    if (inode.ino !== -1 && fs().fstatSync(fd).ino !== inode.ino) return durable;
    current = fs().readFileSync(fd);
  } catch {
    return durable;
  } finally {
    if (fd !== -1) fs().closeSync(fd);
  }
  if (mode === 'everything') return current;
  const lo = Math.min(durable.length, current.length);
  const hi = Math.max(durable.length, current.length);
  if (mode === 'torn') {
    let firstChange = 0;
    while (firstChange < lo && durable[firstChange] === current[firstChange]) firstChange++;
    const cut = firstChange + Math.floor(rand() * (hi - firstChange + 1));
    const out = Buffer.alloc(Math.max(durable.length, Math.min(cut, current.length)));
    durable.copy(out);
    current.copy(out, 0, 0, Math.min(cut, current.length));
    return out;
  }
  const pick = rand();
  const len = pick < 0.4 ? durable.length : pick < 0.8 ? current.length : lo + Math.floor(rand() * (hi - lo + 1));
  const out = Buffer.alloc(len);
  for (let at = 0; at < len; at += SECTOR_BYTES) {
    const end = Math.min(len, at + SECTOR_BYTES);
    const src = rand() < 0.5 ? current : durable;
    if (at < src.length) src.copy(out, at, at, Math.min(end, src.length));
  }
  return out;
}

/**
 * raft's seeded PRNG as a function, so a failing crash sequence reproduces from its seed. Safe inside the
 * vi.mock factories that load this file: @flotilla/raft imports neither node:fs nor level.
 */
export function prng(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/**
 * Where the tests make their directories: tmpfs when there is one. LevelDB (native, outside the
 * simulation) really fsyncs; on tmpfs that costs nothing, which makes a hundred reopens take a second.
 */
export function simTmpBase(fallback: string): string {
  try {
    fs().accessSync('/dev/shm', fs().constants.W_OK);
    return '/dev/shm';
  } catch {
    return fallback;
  }
}
