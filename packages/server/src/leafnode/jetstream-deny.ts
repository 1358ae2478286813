// JetStream traffic that never crosses a leaf link of a (non-system) account, as nats-server adds to every
// leaf connection's permissions both ways (denyAllClientJs): the domain-less API and the KV/object-store
// subjects, which would otherwise reach two JetStreams at once. `$JS.<domain>.API.>` crosses, so a
// JetStream behind a leaf is reached by its domain.
import { subjectIsSubsetOf, subjectMatchesFilter } from '@flotilla/protocol';

const DENIED = ['$JS.API.>', '$KV.>', '$OBJ.>'];

/** true for a subscription wholly inside a denied subject space: its interest is not passed on. */
export function interestDenied(subject: string): boolean {
  if (subject.charCodeAt(0) !== 0x24 /* $ */) return false;
  for (const d of DENIED) if (subjectIsSubsetOf(subject, d)) return true;
  return false;
}

/** true for a published subject that may not cross (a wildcard interest like `>` still gets none of these). */
export function messageDenied(subject: string): boolean {
  if (subject.charCodeAt(0) !== 0x24) return false;
  for (const d of DENIED) if (subjectMatchesFilter(subject, d)) return true;
  return false;
}
