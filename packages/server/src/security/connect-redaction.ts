// CONNECT as traced with -V/-DV: secrets replaced the way nats-server does ("[REDACTED]").
const SECRET_FIELDS = ['pass', 'auth_token', 'sig', 'jwt'] as const;
const REDACTED = '[REDACTED]';

export function redactedConnect(opts: Record<string, unknown>): string {
  let copy: Record<string, unknown> | null = null;
  for (const field of SECRET_FIELDS) {
    if (opts[field] === undefined) continue;
    copy ??= { ...opts };
    copy[field] = REDACTED;
  }
  return JSON.stringify(copy ?? opts);
}
