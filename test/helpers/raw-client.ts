// A raw TCP client for asserting exact protocol bytes.
import { connect, type Socket } from 'node:net';

export class RawClient {
  private data = '';
  private closedFlag = false;
  private readonly waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.data += d.toString('latin1');
      this.wake();
    });
    socket.on('close', () => {
      this.closedFlag = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number): Promise<RawClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new RawClient(socket);
    await client.waitFor(/^INFO .*\r\n/);
    return client;
  }

  get received(): string {
    return this.data;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  send(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** Drops everything received so far. */
  clear(): void {
    this.data = '';
  }

  /** Waits until the received bytes match; returns the match. */
  async waitFor(pattern: RegExp, timeoutMs = 5_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.data.match(pattern);
      if (m) return m;
      if (this.closedFlag) throw new Error(`closed before ${pattern}; received ${JSON.stringify(this.data)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${pattern}; received ${JSON.stringify(this.data)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async waitClosed(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closedFlag) {
      if (Date.now() > deadline) throw new Error(`still open; received ${JSON.stringify(this.data)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Round trip: PING and wait for the PONG that follows everything sent before. */
  async flush(): Promise<void> {
    const before = (this.data.match(/PONG\r\n/g) ?? []).length;
    this.send('PING\r\n');
    const deadline = Date.now() + 5_000;
    while ((this.data.match(/PONG\r\n/g) ?? []).length <= before) {
      if (this.closedFlag || Date.now() > deadline) throw new Error(`no PONG; received ${JSON.stringify(this.data)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
