// Pairs each `$JS.API` request with its answer for the `$JS.EVENT.ADVISORY.API` audit, on the node the request
// entered by (in a cluster the answer reaches the client through that node's relay). Requests are noted
// only while someone listens on the audit subject, and at most MAX_OPEN_REQUESTS wait for an answer (the
// oldest is forgotten first), so a node without listeners or with requests that never get answered here
// keeps nothing.
import type { MessageBus } from '../message-bus.js';
import { API_AUDIT_SUBJECT, apiAuditEvent } from './jetstream-events.js';

export const MAX_OPEN_REQUESTS = 1024;

interface OpenRequest {
  subject: string;
  request: string;
}

export class ApiAuditTrail {
  private readonly open = new Map<string, OpenRequest>();

  constructor(
    private readonly bus: MessageBus,
    private readonly serverName: string,
    private readonly domain: () => string | undefined,
  ) {}

  /** A request arrived: remember it under its reply subject while the audit subject has interest. */
  requested(subject: string, reply: string | null, data: Buffer): void {
    if (reply === null || !this.bus.hasInterest(API_AUDIT_SUBJECT)) return;
    if (this.open.size >= MAX_OPEN_REQUESTS) this.open.delete(this.open.keys().next().value as string);
    this.open.set(reply, { subject, request: data.toString('utf8') });
  }

  /** The answer went to `reply`: publish the audit for the request it answers, if one was noted. */
  answered(reply: string, response: string | Buffer): void {
    const req = this.open.get(reply);
    if (req === undefined) return;
    this.open.delete(reply);
    if (!this.bus.hasInterest(API_AUDIT_SUBJECT)) return;
    const text = typeof response === 'string' ? response : response.toString('utf8');
    const body = apiAuditEvent(this.serverName, req.subject, req.request, text, this.domain());
    this.bus.publish(API_AUDIT_SUBJECT, null, null, Buffer.from(JSON.stringify(body)));
  }
}
