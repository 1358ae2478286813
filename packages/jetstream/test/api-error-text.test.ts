import { mkdir } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicErrorText } from '../src/api/error-text.js';

describe('publicErrorText', () => {
  it('keeps the code and reason of a failed file-system call, not its path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'error-text-'));
    try {
      writeFileSync(join(dir, 'file'), 'x');
      const err = await mkdir(join(dir, 'file', 'sub'), { recursive: true }).then(() => null, (e: unknown) => e);
      expect(String((err as Error).message)).toContain(dir);
      expect(publicErrorText(err)).toBe('ENOTDIR: not a directory');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces absolute paths in any other error text', () => {
    expect(publicErrorText(new Error("segment '/var/lib/flotilla/streams/S/messages/1.blk' is damaged"))).toBe("segment '<path>' is damaged");
    expect(publicErrorText(new Error('cannot open C:\\data\\x.blk now'))).toBe('cannot open <path> now');
    expect(publicErrorText('failed at /a/b')).toBe('failed at <path>');
    // A slash inside a word is no path.
    expect(publicErrorText(new Error('read/write failed'))).toBe('read/write failed');
  });
});
