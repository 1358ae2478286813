import { randomBytes } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A 56-character id shaped like nats-server's (an nkey server public key: 'N' + base32). */
export function newServerId(): string {
  const bytes = randomBytes(55);
  let id = 'N';
  for (const b of bytes) id += BASE32[b & 31];
  return id;
}
