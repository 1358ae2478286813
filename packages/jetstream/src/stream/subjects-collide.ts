// Stream subject overlap, from protocol's subject relations (nats-server's SubjectsCollide and
// subjectIsSubsetMatch), used for stream subject overlap and NAMES/LIST `subject` filters.
import { subjectsCollide } from '@flotilla/protocol';

export { subjectIsSubsetOf, subjectsCollide } from '@flotilla/protocol';

/** True when any subject of `as` collides with any subject of `bs`. */
export function anySubjectsCollide(as: readonly string[], bs: readonly string[]): boolean {
  for (const a of as) for (const b of bs) if (subjectsCollide(a, b)) return true;
  return false;
}
