// The server's identity: a real server nkey pair (as nats-server's); its public key ('N' + 55 base32
// characters) is the server id, and it signs auth callout requests.
import nkeys, { type KeyPair } from '@nats-io/nkeys';

export function newServerKeys(): KeyPair {
  return nkeys.createServer();
}
