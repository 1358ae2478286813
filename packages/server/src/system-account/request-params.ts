// Monitoring requests over NATS carry their options as JSON (nats-server's ConnzOptions, JSzOptions,
// HealthzOptions ...); the HTTP endpoints take query parameters. These turn the one into the other so each
// endpoint has one implementation.

function flag(v: unknown): string | null {
  return v === true ? 'true' : null;
}

function set(p: URLSearchParams, key: string, v: unknown): void {
  if (typeof v === 'string' && v !== '') p.set(key, v);
  else if (typeof v === 'number' && v !== 0) p.set(key, String(v));
  else if (v === true) p.set(key, 'true');
}

/** ConnzOptions: sort, auth, subscriptions, subscriptions_detail, offset, limit, cid, state, user, acc. */
export function connzParams(o: Record<string, unknown>): URLSearchParams {
  const p = new URLSearchParams();
  set(p, 'sort', o['sort']);
  set(p, 'auth', o['auth']);
  if (o['subscriptions_detail'] === true) p.set('subs', 'detail');
  else set(p, 'subs', flag(o['subscriptions']));
  set(p, 'offset', o['offset']);
  set(p, 'limit', o['limit']);
  set(p, 'cid', o['cid']);
  // ConnState: 0 open, 1 closed, 2 all
  if (o['state'] === 1) p.set('state', 'closed');
  set(p, 'user', o['user']);
  set(p, 'acc', o['acc']);
  return p;
}

/** JSzOptions: account, accounts, streams, consumer, config, leader_only, offset, limit. */
export function jszParams(o: Record<string, unknown>): URLSearchParams {
  const p = new URLSearchParams();
  set(p, 'acc', o['account']);
  set(p, 'accounts', o['accounts']);
  set(p, 'streams', o['streams']);
  set(p, 'consumers', o['consumer']);
  set(p, 'config', o['config']);
  set(p, 'leader-only', o['leader_only']);
  set(p, 'offset', o['offset']);
  set(p, 'limit', o['limit']);
  return p;
}

/** HealthzOptions: js-enabled-only, js-enabled, js-server-only. */
export function healthzParams(o: Record<string, unknown>): URLSearchParams {
  const p = new URLSearchParams();
  set(p, 'js-enabled-only', o['js-enabled-only']);
  set(p, 'js-enabled', o['js-enabled']);
  set(p, 'js-server-only', o['js-server-only']);
  return p;
}

export function numberOption(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function stringOption(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
