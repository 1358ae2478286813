// The MessageBus stand-in for jetstream's unit tests: synchronous like the server's internal bus, recording
// what JetStream publishes, with a client's side (deliver, request, inbox).
import { subjectMatchesFilter } from '@flotilla/protocol';
import type { BusHandler, BusMessage, MessageBus } from '../../src/message-bus.js';

export interface Delivered extends BusMessage {
  route: string;
}

/** Synchronous bus: handlers run inside publish, like the server's internal bus. */
export class FakeBus implements MessageBus {
  private subs: Array<{ subject: string; handler: BusHandler; active: boolean }> = [];
  readonly published: Delivered[] = [];
  private requests = 0;

  subscribe(subject: string, handler: BusHandler): () => void {
    const sub = { subject, handler, active: true };
    this.subs.push(sub);
    return () => {
      sub.active = false;
      this.subs = this.subs.filter((s) => s !== sub);
    };
  }
  publish(subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    this.publishTo(subject, subject, reply, header, data);
  }
  publishTo(route: string, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    const msg: Delivered = {
      route,
      subject,
      reply,
      header: header && header.length > 0 ? Buffer.from(header) : null,
      data: Buffer.from(data),
    };
    this.published.push(msg);
    for (const s of [...this.subs]) if (s.active && subjectMatchesFilter(route, s.subject)) s.handler(msg);
  }
  hasInterest(subject: string): boolean {
    return this.subs.some((s) => subjectMatchesFilter(subject, s.subject));
  }
  /** Every fake subscription stands for a client here. */
  hasClientInterest(subject: string): boolean {
    return this.hasInterest(subject);
  }
  /** A client's publish: handed to the matching subscriptions, not recorded in `published`. */
  deliver(subject: string, data: string | Uint8Array, reply: string | null = null, header: Uint8Array | null = null): void {
    const msg: BusMessage = { subject, reply, header: header && header.length > 0 ? Buffer.from(header) : null, data: Buffer.from(data) };
    for (const s of [...this.subs]) if (s.active && subjectMatchesFilter(subject, s.subject)) s.handler(msg);
  }
  /** What was published, subjects with bodies as text. */
  publishedText(): Array<{ subject: string; data: string }> {
    return this.published.map((m) => ({ subject: m.subject, data: m.data.toString() }));
  }
  /** The subjects subscribed now, in subscription order. */
  subjects(): string[] {
    return this.subs.map((s) => s.subject);
  }
  /** Publishes with a fresh reply subject and waits (bounded) for the first answer, parsed as JSON. */
  async request(subject: string, body: string | object = '', waitMs = 500): Promise<Record<string, any> | null> {
    const reply = `_R.${++this.requests}`;
    const { msgs, close } = this.inbox(reply);
    try {
      this.deliver(subject, typeof body === 'string' ? body : JSON.stringify(body), reply);
      for (let waited = 0; waited < waitMs && msgs.length === 0; waited += 5) await new Promise((r) => setTimeout(r, 5));
      return msgs.length > 0 ? (JSON.parse(msgs[0]!.data.toString()) as Record<string, any>) : null;
    } finally {
      close();
    }
  }
  /** Collects what reaches `subject` (a client inbox or deliver subject). */
  inbox(subject: string): { msgs: Delivered[]; close: () => void } {
    const msgs: Delivered[] = [];
    const close = this.subscribe(subject, (m) => msgs.push(m as Delivered));
    return { msgs, close };
  }
}
