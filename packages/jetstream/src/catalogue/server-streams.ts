// Every account's open streams on this node together: the server's max_memory_store / max_file_store are
// one budget for all of them (nats-server's js.memUsed / js.storeUsed), while each account's JetStream keeps
// its own table. Without accounts the one table is the whole set.
import type { Stream } from '../stream/stream.js';
import type { AccountStreams } from './account-limits.js';

export class ServerStreams implements AccountStreams {
  private readonly tables = new Set<AccountStreams>();

  add(table: AccountStreams): void {
    this.tables.add(table);
  }

  remove(table: AccountStreams): void {
    this.tables.delete(table);
  }

  *values(): IterableIterator<Stream> {
    for (const t of this.tables) yield* t.values();
  }
}
