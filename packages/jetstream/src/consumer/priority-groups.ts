// Priority groups (ADR-42, nats-server 2.11+): the config checks, a pull request's group fields and what
// 2.14 answers them with, and the pinned client's pin (id, time, expiry timer). The delivery choice itself
// (which waiting request gets the next message) is the consumer's headRequest; the rules it applies are here.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { ZERO_TIME } from '../api/time-format.js';
import type { Clock } from './clock.js';
import type { ConsumerConfig } from './consumer-config.js';
import { randomId } from './random-id.js';

/** nats-server's JsDefaultPinnedTTL: a pinned client that stops pulling loses the pin after 2 minutes. */
export const DEFAULT_PINNED_TTL_NS = 120_000_000_000;
/** nats-server's validGroupName. */
const VALID_GROUP_NAME = /^[a-zA-Z0-9/_=-]{1,16}$/;

/** The priority-group part of checkConsumerCfg, in 2.14's order. */
export function priorityConfigError(cfg: ConsumerConfig): ApiError | null {
  if (cfg.priority_policy !== undefined && cfg.priority_policy !== 'none') {
    if (cfg.deliver_subject !== undefined) return JsErrors.consumerPushWithPriorityGroup();
    const groups = cfg.priority_groups ?? [];
    if (groups.length === 0) return JsErrors.consumerPriorityPolicyWithoutGroup();
    for (const g of groups) {
      if (g === '') return JsErrors.consumerEmptyGroupName();
      if (!VALID_GROUP_NAME.test(g)) return JsErrors.consumerInvalidGroupName();
    }
    return null;
  }
  if (cfg.priority_groups) return JsErrors.consumerPriorityGroupWithPolicyNone();
  if (cfg.priority_timeout) return JsErrors.consumerPinnedTtlWithPolicyNone();
  return null;
}

/** An UNPIN request's group: 2.14 checks it is set and well formed before looking the consumer up. */
export function isValidGroupName(group: string): boolean {
  return VALID_GROUP_NAME.test(group);
}

/** A JSON pull request's PriorityGroup fields (nats-server decodes them for every JSON request). */
export interface PullPriority {
  group: string;
  minPending: number;
  minAckPending: number;
  /** The pin id the client holds; '' for none. */
  id: string;
  /** 0 (first) … 9; prioritized policy only. */
  priority: number;
}

/** A refusal of a pull request: the status line nats-server sends (no request is queued). */
export interface PullRefusal {
  code: number;
  text: string;
}

/**
 * processNextMsgRequest's priority checks for a consumer with `cfg`; `pinId` the current pin ('' for none).
 * Null: the request may be queued.
 */
export function pullPriorityRefusal(cfg: Readonly<ConsumerConfig>, p: PullPriority | undefined, pinId: string): PullRefusal | null {
  if (p === undefined) return null;
  const policy = cfg.priority_policy ?? 'none';
  if ((p.minPending !== 0 || p.minAckPending !== 0) && policy !== 'overflow') return bad('Not a Overflow Priority consumer');
  if (p.id !== '' && policy !== 'pinned_client') return bad('Not a Pinned Client Priority consumer');
  if (p.priority < 0 || p.priority > 9) return bad('Priority must be between 0 and 9');
  if (policy === 'none') return null;
  if (p.group === '') return bad('Priority Group missing');
  if (!(cfg.priority_groups ?? []).includes(p.group)) return bad('Invalid Priority Group');
  if (pinId !== '' && p.id !== '' && p.id !== pinId) return { code: 423, text: 'Nats-Pin-Id mismatch' };
  return null;
}

function bad(text: string): PullRefusal {
  return { code: 400, text: `Bad Request - ${text}` };
}

/**
 * Overflow: a request with min_pending / min_ack_pending is served only once the consumer has at least
 * that many messages pending (`numPending`, this one included) or unacknowledged (`ackPending`).
 */
export function overflowAllows(p: PullPriority | undefined, numPending: number, ackPending: number): boolean {
  if (p === undefined || (p.minPending <= 0 && p.minAckPending <= 0)) return true;
  return (p.minPending > 0 && p.minPending <= numPending) || (p.minAckPending > 0 && p.minAckPending <= ackPending);
}

/** What happens to the head request of a pinned_client consumer. */
export type PinDecision = 'serve' | 'assign' | 'skip' | 'wrong-pin';

/** nextWaiting's pin rules: the request without an id takes a free pin; with the pin's id it is served. */
export function pinDecision(p: PullPriority | undefined, pinId: string): PinDecision {
  const id = p?.id ?? '';
  if (pinId === '') return id === '' ? 'assign' : 'wrong-pin';
  if (id === pinId) return 'serve';
  return id === '' ? 'skip' : 'wrong-pin';
}

/**
 * The pin of a pinned_client consumer's group (2.14 pins one group). Held by the leader only: a new
 * leader starts unpinned and pins the next request (clients with the old id get 423 and pull again).
 */
export class PinnedClient {
  private pinId = '';
  private pinnedAtMs = 0;
  private cancelTimer: (() => void) | null = null;

  /** `onTimeout`: the holder did not pull for priority_timeout; the pin is already dropped when it runs. */
  constructor(
    private readonly clock: Clock,
    private readonly onTimeout: (group: string) => void,
  ) {}

  get id(): string {
    return this.pinId;
  }

  /** Pins `group` to a new id (nats-server: a NUID) and starts its timer. */
  assign(group: string, ttlNs: number): string {
    this.pinId = randomId(22);
    this.pinnedAtMs = this.clock.nowMs();
    this.touch(group, ttlNs);
    return this.pinId;
  }

  /** The holder pulled: its priority_timeout starts again. */
  touch(group: string, ttlNs: number): void {
    this.cancelTimer?.();
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = null;
      if (this.pinId === '') return;
      this.unassign();
      this.onTimeout(group);
    }, Math.max(1, Math.ceil(ttlNs / 1_000_000)));
  }

  unassign(): void {
    this.pinId = '';
    this.pinnedAtMs = 0;
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  /** ConsumerInfo's `priority_groups` entry for `group`. */
  state(group: string): Record<string, unknown> {
    // Go's omitempty keeps a zero time.Time: an unpinned group shows the zero time.
    if (this.pinId === '') return { group, pinned_ts: ZERO_TIME };
    return { group, pinned_client_id: this.pinId, pinned_ts: new Date(this.pinnedAtMs).toISOString() };
  }
}

/** `$JS.EVENT.ADVISORY.CONSUMER.PINNED.<stream>.<consumer>`'s body. */
export function pinnedAdvisory(base: Record<string, unknown>, group: string, pinId: string): Record<string, unknown> {
  return { type: 'io.nats.jetstream.advisory.v1.consumer_group_pinned', ...base, group, pinned_id: pinId };
}

/** `$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.<stream>.<consumer>`'s body; `reason`: `admin` (UNPIN) or `timeout`. */
export function unpinnedAdvisory(base: Record<string, unknown>, group: string, reason: 'admin' | 'timeout'): Record<string, unknown> {
  return { type: 'io.nats.jetstream.advisory.v1.consumer_group_unpinned', ...base, group, reason };
}
