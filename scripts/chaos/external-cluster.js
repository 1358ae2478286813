// A cluster someone else runs: client URLs (one per node, in the order of `names`), optional monitor URLs,
// and shell commands with a `{name}` placeholder to kill, restart, pause and resume a node
// (e.g. `docker kill {name}`). A fault whose command is missing is skipped.
import { spawn } from 'node:child_process';

const COMMAND_TIMEOUT_MS = 60_000;

function runCommand(template, name) {
  const cmd = template.replaceAll('{name}', name);
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', cmd], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d.toString()).slice(-2000));
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`\`${cmd}\` exited with ${code}: ${err.trim()}`));
    });
  });
}

export function externalCluster({ urls, names, monitorUrls = [], commands = {}, partition = false }) {
  if (names.length !== urls.length) throw new Error(`--names must list one name per URL (${urls.length})`);
  const down = new Set();
  const paused = new Set();
  const run = async (what, name) => {
    if (!commands[what]) throw new Error(`no --${what}-cmd given`);
    await runCommand(commands[what], name);
  };
  return {
    kind: 'external',
    runDir: null,
    supportsPartition: partition,
    supports: (what) => Boolean(commands[what]),
    nodes: names.map((name, i) => ({ name, url: urls[i], monitorUrl: monitorUrls[i] ?? null })),
    isUp: (name) => !down.has(name),
    isPaused: (name) => paused.has(name),
    async kill(name) {
      await run('kill', name);
      down.add(name);
      paused.delete(name);
    },
    async stopNode(name) {
      await run('kill', name);
      down.add(name);
    },
    async restart(name) {
      await run('restart', name);
      down.delete(name);
    },
    async pause(name) {
      await run('pause', name);
      paused.add(name);
    },
    async resume(name) {
      await run('resume', name);
      paused.delete(name);
    },
    async stop() {},
  };
}
