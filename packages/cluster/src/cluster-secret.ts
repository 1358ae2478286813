// The shared cluster secret and the challenge-response that proves it: each end sends a fresh nonce in its
// Hello, and answers the peer's Hello with HMAC-SHA256(secret, label | role | verifier nonce | prover nonce
// | prover id | verifier id). The secret itself never crosses the wire; the role and both ids stop a proof
// from being reflected back to its maker or replayed on another link.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const NONCE_BYTES = 16;
const PROOF_LABEL = 'flotilla-route-auth/1';

/** nats-server's route credentials: user + password, or a token. */
export interface ClusterCredentials {
  user?: string;
  password?: string;
  token?: string;
}

/** The key both ends derive from their credentials; '' when there are none. */
export function secretOf(creds: ClusterCredentials | undefined): string {
  if (creds === undefined) return '';
  if (creds.token !== undefined && creds.token !== '') return `token\0${creds.token}`;
  if (creds.user !== undefined || creds.password !== undefined) return `user\0${creds.user ?? ''}\0${creds.password ?? ''}`;
  return '';
}

export function newNonce(): Uint8Array {
  return randomBytes(NONCE_BYTES);
}

export type ProverRole = 'dialer' | 'acceptor';

export interface ProofInput {
  role: ProverRole;
  verifierNonce: Uint8Array;
  proverNonce: Uint8Array;
  proverId: string;
  verifierId: string;
}

/** The proof the prover sends. */
export function computeProof(secret: string, p: ProofInput): Uint8Array {
  const mac = createHmac('sha256', secret);
  for (const part of [Buffer.from(PROOF_LABEL), Buffer.from(p.role), p.verifierNonce, p.proverNonce, Buffer.from(p.proverId), Buffer.from(p.verifierId)]) {
    // Length prefixes keep the concatenation unambiguous.
    const len = Buffer.alloc(4);
    len.writeUInt32BE(part.length);
    mac.update(len);
    mac.update(part);
  }
  return mac.digest();
}

/** Constant-time check of a received proof. */
export function verifyProof(secret: string, p: ProofInput, proof: Uint8Array): boolean {
  if (p.verifierNonce.length !== NONCE_BYTES || p.proverNonce.length !== NONCE_BYTES) return false;
  const expected = computeProof(secret, p);
  return proof.length === expected.length && timingSafeEqual(proof, expected);
}
