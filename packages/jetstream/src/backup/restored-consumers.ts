// A restored stream's consumers, written as the files a file stream loads its consumers from at open
// (consumer/consumer-storage.ts: `<stream dir>/consumers/<name>/{meta,state}.json`), so they start with the
// delivered sequences, ack floor and pending acks the snapshot held.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConsumerMeta } from '../consumer/consumer-state-placement.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';

export interface StoredConsumerFiles {
  readonly meta: ConsumerMeta;
  readonly state: ConsumerStateSnapshot;
}

/** Names are single NATS tokens (checked at create), so each is one directory; a path-like name is refused. */
export async function writeConsumerFiles(consumersDir: string, consumers: readonly StoredConsumerFiles[]): Promise<void> {
  for (const c of consumers) {
    if (typeof c.meta?.name !== 'string' || c.meta.name === '' || /[\\/.]/.test(c.meta.name)) throw new Error('archive holds a consumer with a bad name');
    const dir = join(consumersDir, c.meta.name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'meta.json'), JSON.stringify(c.meta));
    await writeFile(join(dir, 'state.json'), JSON.stringify(c.state));
  }
}
