// What a client connection needs from the process that owns it (kept narrow so tests can see the seams).
import type { Logger } from 'pino';
import type { ServerOptions } from './config/options.js';
import type { ClientAuth } from './client-auth.js';
import type { MessageRouter } from './message-router.js';
import type { ClientConnection } from './client-connection.js';
import type { Accounts } from './accounts/accounts.js';

export interface ClientHost {
  readonly options: ServerOptions;
  readonly auth: ClientAuth;
  /** the global account's router (the only one without accounts configured) */
  readonly router: MessageRouter;
  readonly accounts: Accounts;
  readonly log: Logger;
  /** true when -V/trace logging is on: guards per-op logging on the hot path */
  readonly traceEnabled: boolean;
  scheduleFlush(conn: ClientConnection): void;
  /** after a successful CONNECT (the system account's connect event) */
  onClientConnected(conn: ClientConnection): void;
  /** a CONNECT refused by authentication (the system account's auth error event) */
  onAuthFailed(conn: ClientConnection): void;
  countSlowConsumer(): void;
  onClientClosed(conn: ClientConnection): void;
  /** The `server` object of a message trace event this server sends (message-trace/). */
  traceServerInfo(): Record<string, unknown>;
}
