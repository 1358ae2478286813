// nkey users: a user's public key (U...) stands in for a password, and CONNECT's `sig` is the Ed25519
// signature of the nonce this server sent in INFO. Key decoding (base32, CRC16) is @nats-io/nkeys'.
import { randomBytes } from 'node:crypto';
import nkeys from '@nats-io/nkeys';

/** nats-server sends 11 random bytes, base64url without padding (15 characters). */
const NONCE_RAW_BYTES = 11;

export function newNonce(): string {
  return randomBytes(NONCE_RAW_BYTES).toString('base64url');
}

/** A well-formed public user key (nats-server's nkeys.IsValidPublicUserKey). */
export function isValidPublicUserKey(key: string): boolean {
  return isValidPublicKey(key, 'U');
}

/** A well-formed public account key (nats-server's nkeys.IsValidPublicAccountKey). */
export function isValidPublicAccountKey(key: string): boolean {
  return isValidPublicKey(key, 'A');
}

/** A well-formed public key of the kind `prefix` names (U user, A account, X curve, ...). */
export function isValidPublicKey(key: string, prefix: 'U' | 'A' | 'X' | 'O'): boolean {
  if (!key.startsWith(prefix)) return false;
  try {
    nkeys.fromPublic(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * true when `sig` (base64url, or standard base64 as nats-server also accepts) is `publicKey`'s signature
 * of the nonce's bytes.
 */
export function verifiesNonce(publicKey: string, nonce: string, sig: string): boolean {
  const signature = decodeSignature(sig);
  if (signature === null) return false;
  try {
    return nkeys.fromPublic(publicKey).verify(Buffer.from(nonce), signature);
  } catch {
    return false;
  }
}

function decodeSignature(sig: string): Uint8Array | null {
  if (/^[A-Za-z0-9_-]+$/.test(sig)) return Buffer.from(sig, 'base64url');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(sig)) return Buffer.from(sig, 'base64');
  return null;
}
