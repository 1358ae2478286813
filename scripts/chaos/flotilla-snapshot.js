// A private copy of the built Flotilla (bin/, packages/*/{package.json,dist,proto}) for one run, with a
// node_modules that links the copy's workspace packages and the checkout's third-party ones. A node
// restarted mid-run then runs the same code as at the start even if the checkout is rebuilt meanwhile
// (a rebuild that changed a storage format once made every restarted replica unreadable).
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

export function snapshotFlotilla(repoRoot, intoDir) {
  const root = join(intoDir, 'flotilla-build');
  cpSync(join(repoRoot, 'bin'), join(root, 'bin'), { recursive: true });
  const workspaces = readdirSync(join(repoRoot, 'packages'));
  for (const pkg of workspaces) {
    const from = join(repoRoot, 'packages', pkg);
    const to = join(root, 'packages', pkg);
    mkdirSync(to, { recursive: true });
    cpSync(join(from, 'package.json'), join(to, 'package.json'));
    for (const dir of ['dist', 'proto']) {
      if (existsSync(join(from, dir))) cpSync(join(from, dir), join(to, dir), { recursive: true });
    }
  }
  const modules = join(root, 'node_modules');
  mkdirSync(join(modules, '@flotilla'), { recursive: true });
  for (const pkg of workspaces) symlinkSync(join('..', '..', 'packages', pkg), join(modules, '@flotilla', pkg));
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry === '@flotilla' || entry === '.bin' || entry.startsWith('.')) continue;
    symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  return join(root, 'bin', 'flotilla.js');
}
