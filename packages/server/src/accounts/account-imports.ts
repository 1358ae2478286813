// The only ways a message crosses accounts: a stream import (messages published in the exporting account
// on the imported subjects are delivered in the importing one, under `to` / `prefix`) and a service import
// (requests published in the importing account reach the exporter's responders, with a reply subject that
// brings their answers back). Each import is one internal subscription in the account messages leave.
import type { AccountExport, AccountImport } from '../config/options.js';
import { Subscription, type SubscriptionOwner } from '../subscription.js';
import type { Account } from './account.js';
import { DEFAULT_RESPONSE_THRESHOLD_MS } from './service-responses.js';
import { subjectMapping, type SubjectMapping } from './subject-mapping.js';

/**
 * Imports that lead back into an account already on the way (A imports from B, B from A) would forward a
 * message for ever; nats-server refuses such configs, Flotilla stops the message after this many crossings.
 */
const MAX_CROSSINGS = 8;
let crossings = 0;

class StreamImport implements SubscriptionOwner {
  readonly cid = 0;

  constructor(
    private readonly into: Account,
    private readonly mapping: SubjectMapping,
  ) {}

  deliverMessage(_sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (crossings >= MAX_CROSSINGS) return;
    crossings++;
    try {
      this.into.router.publish(this.mapping === null ? subject : this.mapping(subject), reply, headerBytes, message, 0, true);
    } finally {
      crossings--;
    }
  }

  /** A JetStream push delivery to an imported deliver subject: matched there on the mapped route, it keeps its stored subject. */
  deliverRouted(_sub: Subscription, route: string, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (crossings >= MAX_CROSSINGS) return;
    crossings++;
    try {
      this.into.router.publishTo(this.mapping === null ? route : this.mapping(route), subject, reply, headerBytes, message);
    } finally {
      crossings--;
    }
  }

  /** A push consumer's deliver subject is bound when a client subscribes it in the importing account. */
  clientInterest(subject: string): boolean {
    if (crossings >= MAX_CROSSINGS) return false;
    crossings++;
    try {
      return this.into.router.hasClientInterest(this.mapping === null ? subject : this.mapping(subject));
    } finally {
      crossings--;
    }
  }
}

class ServiceImport implements SubscriptionOwner {
  readonly cid = 0;
  private readonly thresholdMs: number;

  constructor(
    private readonly importer: Account,
    private readonly exporter: Account,
    private readonly mapping: SubjectMapping,
    private readonly exported: AccountExport,
  ) {
    this.thresholdMs = exported.responseThresholdMs ?? DEFAULT_RESPONSE_THRESHOLD_MS;
  }

  deliverMessage(_sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (crossings >= MAX_CROSSINGS) return;
    crossings++;
    try {
      const mappedReply =
        reply === null ? null : this.exporter.responses.track(this.importer.router, reply, this.exported.responseType ?? 'singleton', this.thresholdMs);
      let to = this.mapping === null ? subject : this.mapping(subject);
      // The exporting account's own subject mappings apply to what its import brings in (nats-server does too).
      const mappings = this.exporter.router.mappings;
      if (mappings !== null) {
        const mapped = mappings.map(to);
        if (mapped === null) return;
        to = mapped;
      }
      this.exporter.router.publish(to, mappedReply, headerBytes, message, 0, true);
    } finally {
      crossings--;
    }
  }
}

/** Subscribes `imp` of `importer`; `exported` is the export of `exporter` that grants it. Returns the undo. */
export function wireImport(importer: Account, exporter: Account, imp: AccountImport, exported: AccountExport, sid: string): () => void {
  if (imp.kind === 'stream') {
    const local = imp.prefix !== undefined ? imp.prefix + imp.subject : (imp.to ?? imp.subject);
    const sub = new Subscription(new StreamImport(importer, subjectMapping(imp.subject, local)), imp.subject, null, sid);
    exporter.router.subscribe(sub);
    return () => exporter.router.unsubscribe(sub);
  }
  const local = imp.to ?? imp.subject;
  const sub = new Subscription(new ServiceImport(importer, exporter, subjectMapping(local, imp.subject), exported), local, null, sid);
  importer.router.subscribe(sub);
  return () => importer.router.unsubscribe(sub);
}
