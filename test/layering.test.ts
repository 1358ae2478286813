// The package layers, declared dependencies, no value-import cycles inside a package, the ports rule of
// packages/jetstream and no process.env below server — checked over packages/*/src on every `npm test`. The first block proves the checker
// flags what it should by planting violations in an in-memory file set.
import { describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { checkLayering, parseImports, readWorkspace, type Workspace } from './helpers/layering-check.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Files under jetstream's stream/, consumer/ and api/ that still import cluster/ or local/ (importer →
 * imported). None today (the ports work removed them); kept so a pair that must stay while a port is built
 * is written down here, and a pair that no longer exists fails (delete it here).
 */
const PORT_RULE_OFFENDERS_TODAY: Readonly<Record<string, readonly string[]>> = {};

function workspace(files: Record<string, string>, declared: Record<string, string[]> = {}): Workspace {
  return {
    files: new Map(Object.entries(files)),
    declared: new Map(Object.entries(declared).map(([pkg, deps]) => [pkg, new Set(deps)])),
  };
}

describe('the checker (planted violations)', () => {
  test('parses static, re-export, side-effect and dynamic imports; type-only ones are marked', () => {
    const refs = parseImports(
      [
        "import { a } from './a.js';",
        "import type { B } from './b.js';",
        "import { type C, type D } from './c.js';",
        "import { type E, f } from './e.js';",
        "export { g } from './g.js';",
        "export type { H } from './h.js';",
        "export * from './star.js';",
        "import './side.js';",
        'import {',
        '  multi,',
        '  line,',
        "} from './multi.js';",
        "// import { commented } from './commented.js';",
        "/* import { blocked } from './blocked.js'; */",
        "const lazy = await import('./lazy.js');",
      ].join('\n'),
    );
    expect(refs).toEqual([
      { specifier: './a.js', typeOnly: false, dynamic: false },
      { specifier: './b.js', typeOnly: true, dynamic: false },
      { specifier: './c.js', typeOnly: true, dynamic: false },
      { specifier: './e.js', typeOnly: false, dynamic: false },
      { specifier: './g.js', typeOnly: false, dynamic: false },
      { specifier: './h.js', typeOnly: true, dynamic: false },
      { specifier: './star.js', typeOnly: false, dynamic: false },
      { specifier: './multi.js', typeOnly: false, dynamic: false },
      { specifier: './side.js', typeOnly: false, dynamic: false },
      { specifier: './lazy.js', typeOnly: false, dynamic: true },
    ]);
  });

  test('flags an import back up the layers, of server from anywhere, and of a file outside src/', () => {
    const report = checkLayering(
      workspace(
        {
          'packages/raft/src/node.ts': "import { FileStore } from '@flotilla/store';",
          'packages/store/src/file.ts': "import type { Stream } from '@flotilla/jetstream';",
          'packages/jetstream/src/x.ts': "import { main } from '@flotilla/server';",
          'packages/jetstream/src/ok.ts': "import { RaftNode } from '@flotilla/raft';",
          'packages/jetstream/src/consumer/y.ts': "import { fixture } from '../../test/support/consumer-fixture.js';",
        },
        { raft: ['@flotilla/store'], store: ['@flotilla/jetstream'], jetstream: ['@flotilla/server', '@flotilla/raft'] },
      ),
    );
    expect(report.backImports).toEqual([
      "packages/jetstream/src/consumer/y.ts imports '../../test/support/consumer-fixture.js': a relative import out of packages/jetstream/src (test fixtures live in test/)",
      "packages/jetstream/src/x.ts imports '@flotilla/server': jetstream may import only [protocol, store, raft]",
      "packages/raft/src/node.ts imports '@flotilla/store': raft may import only []",
      "packages/store/src/file.ts imports '@flotilla/jetstream': store may import only [raft]",
    ]);
    expect(report.undeclared).toEqual([]);
  });

  test('flags an import of a package the importer does not declare (workspace hoisting is no declaration)', () => {
    const report = checkLayering(
      workspace(
        {
          'packages/jetstream/src/a.ts': "import { RaftNode } from '@flotilla/raft';\nimport { Level } from 'level';",
          'packages/jetstream/src/b.ts': "import { readFile } from 'node:fs/promises';\nimport { join } from 'path';",
        },
        { jetstream: ['@flotilla/protocol'] },
      ),
    );
    expect(report.undeclared).toEqual([
      "packages/jetstream/src/a.ts imports '@flotilla/raft': @flotilla/raft is not in packages/jetstream/package.json dependencies",
      "packages/jetstream/src/a.ts imports 'level': level is not in packages/jetstream/package.json dependencies",
    ]);
  });

  test('flags a value-import cycle inside a package; type-only and dynamic imports do not make one', () => {
    const report = checkLayering(
      workspace({
        'packages/store/src/a.ts': "import { b } from './b.js';",
        'packages/store/src/b.ts': "import { c } from './sub/c.js';",
        'packages/store/src/sub/c.ts': "export { a } from '../a.js';",
        'packages/store/src/t1.ts': "import type { T2 } from './t2.js';",
        'packages/store/src/t2.ts': "import { type T1 } from './t1.js';\nimport { t1 } from './t1.js';",
        'packages/store/src/d1.ts': "import { d2 } from './d2.js';",
        'packages/store/src/d2.ts': "const d1 = () => import('./d1.js');",
      }),
    );
    expect(report.cycles).toEqual(['packages/store/src/a.ts → packages/store/src/b.ts → packages/store/src/sub/c.ts → packages/store/src/a.ts']);
  });

  test('flags stream/, consumer/ or api/ importing cluster/ or local/ inside jetstream (type imports too)', () => {
    const report = checkLayering(
      workspace({
        'packages/jetstream/src/stream/stream.ts': "import { StreamReplica } from '../cluster/stream-replica.js';",
        'packages/jetstream/src/api/stream-api.ts': "import type { LocalWriter } from '../local/local-writer.js';",
        'packages/jetstream/src/consumer/ok.ts': "import { Stream } from '../stream/stream.js';",
        'packages/jetstream/src/cluster/stream-replica.ts': "import type { Stream } from '../stream/stream.js';",
        'packages/jetstream/src/local/local-writer.ts': '',
        'packages/jetstream/src/jetstream-service.ts':
          "import { StreamReplica } from './cluster/stream-replica.js';\nimport { LocalWriter } from './local/local-writer.js';",
      }),
    );
    expect([...report.portViolations]).toEqual([
      ['packages/jetstream/src/api/stream-api.ts', ['packages/jetstream/src/local/local-writer.ts']],
      ['packages/jetstream/src/stream/stream.ts', ['packages/jetstream/src/cluster/stream-replica.ts']],
    ]);
  });

  test('flags a library reading process.env; server may', () => {
    const report = checkLayering(
      workspace({
        'packages/store/src/wal.ts': "const wal = process.env['FLOTILLA_RAFT_LOG_WAL'];",
        'packages/store/src/doc.ts': '// process.env is read by the server only',
        'packages/server/src/main.ts': 'resolveOptions(process.argv, process.env);',
      }),
    );
    expect(report.envReads).toEqual(['packages/store/src/wal.ts reads process.env: take the value as an option from the server instead']);
  });

  test('the real tree with a planted back-import and a planted cycle fails', () => {
    const real = readWorkspace(ROOT);
    const files = new Map(real.files);
    files.set('packages/protocol/src/planted.ts', "import { JetStreamService } from '@flotilla/jetstream';");
    files.set('packages/raft/src/planted-a.ts', "import { b } from './planted-b.js';");
    files.set('packages/raft/src/planted-b.ts', "import { a } from './planted-a.js';");
    const report = checkLayering({ files, declared: real.declared });
    expect(report.backImports).toContain(
      "packages/protocol/src/planted.ts imports '@flotilla/jetstream': protocol may import only []",
    );
    expect(report.undeclared).toContain(
      "packages/protocol/src/planted.ts imports '@flotilla/jetstream': @flotilla/jetstream is not in packages/protocol/package.json dependencies",
    );
    expect(report.cycles).toContain('packages/raft/src/planted-a.ts → packages/raft/src/planted-b.ts → packages/raft/src/planted-a.ts');
  });
});

describe('the workspace', () => {
  const report = checkLayering(readWorkspace(ROOT));

  test('every imported package is declared in the importer’s package.json', () => {
    expect(report.undeclared, report.undeclared.join('\n')).toEqual([]);
  });

  test('no import runs back up the layers (raft, protocol < store < cluster, jetstream < server)', () => {
    expect(report.backImports, report.backImports.join('\n')).toEqual([]);
  });

  test('no value-import cycle between the files of one package', () => {
    expect(report.cycles, report.cycles.join('\n')).toEqual([]);
  });

  test('no library reads process.env (configuration enters as options from server)', () => {
    expect(report.envReads, report.envReads.join('\n')).toEqual([]);
  });

  test('jetstream: stream/, consumer/ and api/ import no cluster/ or local/ file beyond today’s shrinking list', () => {
    const added: string[] = [];
    for (const [importer, targets] of report.portViolations) {
      for (const target of targets) {
        if (!(PORT_RULE_OFFENDERS_TODAY[importer] ?? []).includes(target)) added.push(`${importer} imports ${target}`);
      }
    }
    const gone: string[] = [];
    for (const [importer, targets] of Object.entries(PORT_RULE_OFFENDERS_TODAY)) {
      for (const target of targets) {
        if (!(report.portViolations.get(importer) ?? []).includes(target)) gone.push(`${importer} → ${target}`);
      }
    }
    expect(added, `new imports of an implementation from logic code (depend on a port instead):\n${added.join('\n')}`).toEqual([]);
    expect(gone, `no longer imported — delete from PORT_RULE_OFFENDERS_TODAY:\n${gone.join('\n')}`).toEqual([]);
  });
});
