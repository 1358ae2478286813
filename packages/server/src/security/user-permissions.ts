// A user's publish/subscribe permissions compiled once and shared by all of the user's connections.
// Publish checks and delivery filtering are on the hot path, so their answers are cached per subject
// (bounded; the oldest entry goes first).
import { subjectMatchesFilter, subjectHasWildcard } from '@flotilla/protocol';
import type { Permissions, ResponsePermission } from '../config/options.js';
import { SubjectRules } from './subject-rules.js';

const ANSWER_CACHE_MAX_ENTRIES = 4096;

function rulesOf(subjects: readonly string[] | undefined): SubjectRules | null {
  return subjects === undefined ? null : new SubjectRules(subjects);
}

function remember(cache: Map<string, boolean>, subject: string, answer: boolean): boolean {
  if (cache.size >= ANSWER_CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(subject, answer);
  return answer;
}

export class UserPermissions {
  private readonly pubAllow: SubjectRules | null;
  private readonly pubDeny: SubjectRules | null;
  private readonly subAllow: SubjectRules | null;
  private readonly subDeny: SubjectRules | null;
  /** allow_responses, or null */
  readonly responses: ResponsePermission | null;
  private readonly publishAnswers = new Map<string, boolean>();
  private readonly deliveryDenials = new Map<string, boolean>();

  /** `source`: the permissions as configured, for $SYS.REQ.USER.INFO */
  constructor(readonly source: Permissions) {
    const p = source;
    this.pubAllow = rulesOf(p.publish?.allow);
    this.pubDeny = rulesOf(p.publish?.deny);
    this.subAllow = rulesOf(p.subscribe?.allow);
    this.subDeny = rulesOf(p.subscribe?.deny);
    this.responses = p.allowResponses ?? null;
  }

  /** Publish allow/deny lists alone (allow_responses is tracked per connection by ResponsePermits). */
  canPublish(subject: string): boolean {
    const cached = this.publishAnswers.get(subject);
    if (cached !== undefined) return cached;
    let allowed = this.pubAllow === null || this.pubAllow.matchesPublish(subject);
    if (allowed && this.pubDeny !== null) allowed = !this.pubDeny.matchesPublish(subject);
    return remember(this.publishAnswers, subject, allowed);
  }

  /** nats-server's canSubscribe: allow list (queue entries decide for queue subscribers), then deny. */
  canSubscribe(subject: string, queue: string | null): boolean {
    let allowed = true;
    if (this.subAllow !== null) {
      const m = this.subAllow.matchSubscribe(subject, queue);
      allowed = m.plain;
      if (m.queueMatch !== null) allowed = m.queueMatch;
    }
    if (allowed && this.subDeny !== null) {
      const m = this.subDeny.matchSubscribe(subject, queue);
      allowed = !m.plain;
      if (m.queueMatch !== null) allowed = !m.queueMatch;
    }
    return allowed;
  }

  /**
   * A wildcard subscription that was allowed may still cover denied subjects ("foo.*" with "foo.bar"
   * denied): then the connection filters deliveries with `deniesDelivery`, as nats-server does.
   */
  subscriptionNeedsDeliveryFilter(subject: string): boolean {
    if (this.subDeny === null || !subjectHasWildcard(subject)) return false;
    for (const denied of this.subDeny.plainSubjects) if (subjectMatchesFilter(denied, subject)) return true;
    return false;
  }

  /** true when a message on `subject` must not be delivered (subscribe deny list). */
  deniesDelivery(subject: string): boolean {
    if (this.subDeny === null) return false;
    const cached = this.deliveryDenials.get(subject);
    if (cached !== undefined) return cached;
    return remember(this.deliveryDenials, subject, this.subDeny.matchesPublish(subject));
  }
}
