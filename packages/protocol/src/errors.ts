// nats-server's exact -ERR texts, named once. Clients match on these strings.
export const ERR_UNKNOWN_OP = 'Unknown Protocol Operation';
export const ERR_MAX_CONTROL_LINE = 'maximum control line exceeded';
export const ERR_MAX_PAYLOAD = 'Maximum Payload Violation';
export const ERR_AUTH_VIOLATION = 'Authorization Violation';
export const ERR_AUTH_TIMEOUT = 'Authentication Timeout';
export const ERR_AUTH_EXPIRED = 'User Authentication Expired';
export const ERR_ACCOUNT_EXPIRED = 'Account Authentication Expired';
export const ERR_STALE_CONNECTION = 'Stale Connection';
export const ERR_NO_RESPONDERS_NEEDS_HEADERS = 'no responders requires headers support';
export const ERR_INVALID_PROTOCOL = 'invalid client protocol';
export const ERR_MAX_CONNECTIONS = 'maximum connections exceeded';
export const ERR_INVALID_SUBJECT = 'Invalid Subject';
export const ERR_INVALID_PUBLISH_SUBJECT = 'Invalid Publish Subject';
export const ERR_MAX_SUBSCRIPTIONS = 'maximum subscriptions exceeded';
export const ERR_MAX_ACCOUNT_CONNECTIONS = 'maximum account active connections exceeded';
export const ERR_SLOW_CONSUMER = 'Slow Consumer';

export function permissionsViolationPublish(subject: string): string {
  return `Permissions Violation for Publish to "${subject}"`;
}

export function permissionsViolationSubscribe(subject: string): string {
  return `Permissions Violation for Subscription to "${subject}"`;
}
