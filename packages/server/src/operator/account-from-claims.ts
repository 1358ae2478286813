// An account JWT's claims as the AccountOptions config mode builds accounts from (accounts/accounts.ts), so
// operator-mode accounts are the same Account objects: name = the account's public key, limits, JetStream
// limits, mappings, exports and imports. An import is kept only when its exporter is known, exports it,
// and — for an export with token_req — the import carries a valid, unrevoked activation token
// (nats-server drops such imports with a warning too).
import type { AccountExport, AccountImport, AccountJetStreamLimitOptions, AccountJetStreamOptions, AccountOptions } from '../config/options.js';
import { exportCovering } from '../config/account-links.js';
import { isSubsetMatch } from '../config/subject-subset.js';
import type { MappingOptions } from '../accounts/subject-mappings.js';
import { verifyJwt, type AccountClaims, type JwtClaims, type JwtExport } from './nats-jwt.js';

const NS_PER_MS = 1_000_000;

/** A JWT limit: -1 unlimited; a missing one is 0, as nats-server decodes it (nsc always writes them all). */
function limit(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}

function unlimitedWhenZero(n: number | undefined): number {
  const v = limit(n);
  return v === 0 ? -1 : v;
}

type JwtJetStreamLimits = Record<string, number | boolean | undefined>;

function jetstreamLimitsOf(src: JwtJetStreamLimits): AccountJetStreamLimitOptions {
  return {
    maxMemoryBytes: limit(src['mem_storage'] as number | undefined),
    maxStoreBytes: limit(src['disk_storage'] as number | undefined),
    maxStreams: limit(src['streams'] as number | undefined),
    maxConsumers: limit(src['consumer'] as number | undefined),
    // nats-server's toUnlimited: 0 means no limit for these three
    maxAckPending: unlimitedWhenZero(src['max_ack_pending'] as number | undefined),
    memoryMaxStreamBytes: unlimitedWhenZero(src['mem_max_stream_bytes'] as number | undefined),
    storeMaxStreamBytes: unlimitedWhenZero(src['disk_max_stream_bytes'] as number | undefined),
    maxBytesRequired: src['max_bytes_required'] === true,
  };
}

function storageLimited(l: AccountJetStreamLimitOptions): boolean {
  return l.maxMemoryBytes !== 0 || l.maxStoreBytes !== 0;
}

/**
 * nats-server's account claims: JetStream is enabled when the default limits or any tier has a storage limit
 * not 0; the default limits win when they have one, else every tier is kept (by name, R1, R3…).
 */
function jetstreamOf(l: AccountClaims['limits']): AccountJetStreamOptions | undefined {
  if (l === undefined) return undefined;
  const flat = jetstreamLimitsOf(l as JwtJetStreamLimits);
  if (storageLimited(flat)) return flat;
  const tiers: Record<string, AccountJetStreamLimitOptions> = {};
  for (const [name, t] of Object.entries(l.tiered_limits ?? {})) tiers[name] = jetstreamLimitsOf((t ?? {}) as JwtJetStreamLimits);
  if (!Object.values(tiers).some(storageLimited)) return undefined;
  // the default limits are not used with tiers; nats-server shows them as zeros
  return { ...jetstreamLimitsOf({}), maxAckPending: 0, memoryMaxStreamBytes: 0, storeMaxStreamBytes: 0, tiers };
}

function exportOf(x: JwtExport): AccountExport {
  const out: AccountExport = { kind: x.type === 'service' ? 'service' : 'stream', subject: x.subject };
  const pos = (x as { account_token_position?: number }).account_token_position;
  if (typeof pos === 'number' && pos > 0) out.accountTokenPosition = pos;
  if (x.type === 'service') {
    if (x.response_type !== undefined) out.responseType = x.response_type.toLowerCase() as AccountExport['responseType'] & string;
    if (typeof x.response_threshold === 'number' && x.response_threshold > 0) out.responseThresholdMs = Math.round(x.response_threshold / NS_PER_MS);
  }
  return out;
}

function mappingsOf(m: AccountClaims['mappings']): MappingOptions[] | undefined {
  if (m === undefined || m === null) return undefined;
  const out: MappingOptions[] = [];
  for (const [source, dests] of Object.entries(m)) {
    out.push({ source, destinations: (dests ?? []).map((d) => ({ subject: d.subject, weightPct: d.weight ?? 100 })) });
  }
  return out;
}

/** The account's own key and its signing keys (plain or scoped): who may issue its users and activations. */
export function accountIssuers(claims: JwtClaims<AccountClaims>): Set<string> {
  const keys = new Set([claims.sub]);
  for (const k of claims.nats.signing_keys ?? []) keys.add(typeof k === 'string' ? k : k.key);
  return keys;
}

/** Whether `key` is revoked by `revocations` for a JWT issued at `iatSec` (nats-server's isRevoked: an entry for the key or "*" at or after iat). */
export function isRevoked(revocations: Record<string, number> | null | undefined, key: string, iatSec: number): boolean {
  if (revocations === null || revocations === undefined) return false;
  const at = revocations[key];
  const all = revocations['*'];
  return (at !== undefined && at >= iatSec) || (all !== undefined && all >= iatSec);
}

function activationValid(token: string | undefined, exporter: JwtClaims<AccountClaims>, x: JwtExport, importer: string, subject: string): boolean {
  if (token === undefined || token === '') return false;
  try {
    const act = verifyJwt<{ subject?: string; kind?: string }>(token, 'activation');
    if (!accountIssuers(exporter).has(act.iss) || act.sub !== importer) return false;
    const granted = act.nats.subject ?? '';
    if (granted !== subject && !isSubsetMatch(subject, granted)) return false;
    return !isRevoked(x.revocations, importer, act.iat ?? 0);
  } catch {
    return false;
  }
}

/**
 * AccountOptions for every account in `claims` (by key), imports checked against the exporters among them.
 * `warn` hears each import dropped.
 */
export function accountOptionsOf(claims: ReadonlyMap<string, JwtClaims<AccountClaims>>, warn: (msg: string) => void = () => {}): AccountOptions[] {
  const base = new Map<string, AccountOptions>();
  for (const [key, c] of claims) {
    const l = c.nats.limits;
    const a: AccountOptions = {
      name: key,
      nkey: key,
      users: [],
      // the account's exports limit: the ones past it are not granted (-1: none)
      exports: (c.nats.exports ?? []).slice(0, limit(l?.exports) < 0 ? undefined : limit(l?.exports)).map(exportOf),
      imports: [],
      limits: { maxConnections: limit(l?.conn), maxSubscriptions: limit(l?.subs), maxPayloadBytes: limit(l?.payload), maxLeafnodes: limit(l?.leaf) },
    };
    const js = jetstreamOf(l);
    if (js !== undefined) a.jetstream = js;
    const m = mappingsOf(c.nats.mappings);
    if (m !== undefined && m.length > 0) a.mappings = m;
    base.set(key, a);
  }
  for (const [key, c] of claims) {
    const a = base.get(key)!;
    const maxImports = limit(c.nats.limits?.imports);
    for (const imp of c.nats.imports ?? []) {
      const exporter = base.get(imp.account);
      const exporterClaims = claims.get(imp.account);
      const kind = imp.type === 'service' ? 'service' : 'stream';
      const granted = exporter === undefined ? undefined : exportCovering(exporter, kind, imp.subject);
      const jwtExport = exporterClaims?.nats.exports?.find((x) => x.subject === granted?.subject && (x.type === 'service' ? 'service' : 'stream') === kind);
      if (exporter === undefined || granted === undefined || jwtExport === undefined) {
        warn(`account ${key}: import of ${imp.subject} from ${imp.account} dropped: no such export`);
        continue;
      }
      if (jwtExport.token_req === true && !activationValid(imp.token, exporterClaims!, jwtExport, key, imp.subject)) {
        warn(`account ${key}: import of ${imp.subject} from ${imp.account} dropped: activation token missing, invalid or revoked`);
        continue;
      }
      if (isRevoked(jwtExport.revocations, key, c.iat ?? 0)) {
        warn(`account ${key}: import of ${imp.subject} from ${imp.account} dropped: revoked`);
        continue;
      }
      if (maxImports >= 0 && a.imports.length >= maxImports) {
        warn(`account ${key}: import of ${imp.subject} dropped: the account's imports limit is ${maxImports}`);
        continue;
      }
      const local = imp.local_subject || imp.to || undefined;
      const out: AccountImport = { kind, account: imp.account, subject: imp.subject };
      if (kind === 'service' && local !== undefined) out.to = local;
      if (kind === 'stream' && imp.local_subject) out.to = imp.local_subject;
      else if (kind === 'stream' && imp.to) out.prefix = imp.to.endsWith('.') ? imp.to : `${imp.to}.`;
      a.imports.push(out);
    }
  }
  return [...base.values()];
}
