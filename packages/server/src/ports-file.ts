// `<dir>/<executable>_<pid>.ports`, as nats-server writes it with --ports_file_dir, so tools that wait for
// it (test harnesses, the nats CLI's helpers) find our ports the same way.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { basename, join } from 'node:path';

export interface PortsFileContent {
  nats: string[];
  monitoring: string[];
  cluster?: string[];
  websocket?: string[];
}

export class PortsFile {
  readonly path: string;

  constructor(dir: string, executable = PortsFile.executableName(), pid = process.pid) {
    this.path = join(dir, `${executable}_${pid}.ports`);
  }

  /** The name the process was started under (`exec -a nats-server …`); a plain `node` counts as flotilla. */
  static executableName(argv0 = process.argv0): string {
    const name = basename(argv0);
    return name === '' || /^node(js)?(\d+)?(\.exe)?$/i.test(name) ? 'flotilla' : name;
  }

  /** URLs for a listener: a wildcard host expands to loopback plus every IPv4 interface address. */
  static urls(scheme: string, host: string, port: number): string[] {
    if (host !== '0.0.0.0' && host !== '::' && host !== '') return [`${scheme}://${host}:${port}`];
    const hosts = ['127.0.0.1'];
    for (const addrs of Object.values(networkInterfaces())) {
      for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) hosts.push(a.address);
    }
    return hosts.map((h) => `${scheme}://${h}:${port}`);
  }

  write(content: PortsFileContent): void {
    mkdirSync(join(this.path, '..'), { recursive: true });
    // Written whole then renamed, so a reader polling for the file never sees it half-written.
    const temp = `${this.path}.tmp`;
    writeFileSync(temp, JSON.stringify(content));
    renameSync(temp, this.path);
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }
}
