// One account: its own subject space (a MessageRouter with its own Sublist) and, when it exports services,
// the replies it owes to other accounts. A connection holds its account's router directly, so routing a
// message never looks an account up.
import type { AccountLimitOptions } from '../config/options.js';
import type { MessageRouter } from '../message-router.js';
import { ServiceResponses } from './service-responses.js';

/** nats-server's global account: users outside `accounts {}` and connections without auth. */
export const GLOBAL_ACCOUNT_NAME = '$G';

export class Account {
  /** Created on the first service request from another account. */
  private responsesOwed: ServiceResponses | null = null;
  /** Client connections on this node that completed CONNECT into this account (limits.maxConnections). */
  clientConnections = 0;

  constructor(
    readonly name: string,
    readonly router: MessageRouter,
    readonly limits: AccountLimitOptions | null = null,
  ) {}

  /** Where this account's responders answer requests that came in through another account's import. */
  get responses(): ServiceResponses {
    return (this.responsesOwed ??= new ServiceResponses(this.router));
  }

  close(): void {
    this.responsesOwed?.close();
  }
}
