import { MemoryStore } from '@flotilla/store';
import { runStoreSuite } from './store-suite.js';

runStoreSuite('MemoryStore', {
  create: async (opts) => new MemoryStore(opts),
  // nats-server memStoreMsgSize: subject + header + payload + 16.
  sizeOf: (subject, header, data) => Buffer.byteLength(subject) + header.length + data.length + 16,
});
