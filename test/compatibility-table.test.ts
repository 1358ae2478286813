// docs/compatibility.md is the one place that says which nats-server release's features Flotilla has; the
// advertised version and the JetStream API level must follow from its tables (see the doc's opening).
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { ADVERTISED_NATS_VERSION, JS_API_LEVEL } from '../packages/server/src/version.js';

interface Row {
  release: string;
  feature: string;
  level: number | null;
  status: string;
}

const STATUS = /^(done|building \(.+\)|issue \d+)$/;

function readTable(): Row[] {
  const text = readFileSync(new URL('../docs/compatibility.md', import.meta.url), 'utf8');
  const rows: Row[] = [];
  let release: string | null = null;
  for (const line of text.split('\n')) {
    const heading = /^## (2\.\d+)\b/.exec(line);
    if (heading) release = heading[1]!;
    else if (line.startsWith('## ')) release = null;
    if (release === null || !line.startsWith('| ') || line.startsWith('| Feature') || line.startsWith('|---')) continue;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    expect(cells.length, line).toBe(3);
    const [feature, level, status] = cells as [string, string, string];
    expect(level === '–' || /^\d+$/.test(level), `level of ${feature}`).toBe(true);
    expect(status, `status of ${feature}`).toMatch(STATUS);
    rows.push({ release, feature, level: level === '–' ? null : Number(level), status });
  }
  return rows;
}

const minor = (release: string) => Number(release.split('.')[1]);

describe('docs/compatibility.md pins the advertised version and the API level', () => {
  const rows = readTable();

  it('lists every release from 2.11 to 2.14 that has features', () => {
    expect([...new Set(rows.map((r) => r.release))]).toEqual(['2.11', '2.12', '2.14']);
    expect(rows.length).toBeGreaterThanOrEqual(20);
  });

  it('the advertised version is the newest release whose features are all done (2.10.0 when none is)', () => {
    let newest = '2.10';
    for (const release of ['2.11', '2.12', '2.14']) {
      const ofRelease = rows.filter((r) => minor(r.release) <= minor(release));
      if (ofRelease.every((r) => r.status === 'done')) newest = release;
    }
    expect(ADVERTISED_NATS_VERSION).toBe(`${newest}.0`);
  });

  it('the API level is the highest one whose level-raising features are all done', () => {
    let level = 0;
    for (const candidate of [1, 2, 3, 4]) {
      const needed = rows.filter((r) => r.level !== null && r.level <= candidate);
      if (needed.every((r) => r.status === 'done')) level = candidate;
      else break;
    }
    // Level 3 has no release and no feature of its own: 4 follows from 2 only when 2.14's rows are in.
    expect(JS_API_LEVEL).toBe(level === 3 ? 2 : level);
  });
});
