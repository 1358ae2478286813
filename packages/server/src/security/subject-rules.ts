// One allow or deny list of a user's permissions, as a Sublist: matching is a trie walk, never a scan of
// the list. Entries may carry a queue group ("foo.* workers"), as nats-server's permission subjects do.
import { Sublist, isValidSubject, subjectMatchesFilter, subjectHasWildcard } from '@flotilla/protocol';

interface RuleEntry {
  readonly subject: string;
  readonly queue: string | null;
}

export class SubjectRules {
  private readonly list = new Sublist<RuleEntry>({ cacheMaxEntries: 0 });
  /** the plain (queue-less) subjects, for the wildcard-overlap test at subscribe time */
  readonly plainSubjects: string[] = [];

  constructor(subjects: readonly string[]) {
    for (const text of subjects) {
      const space = text.indexOf(' ');
      const subject = space < 0 ? text : text.slice(0, space);
      const queue = space < 0 ? null : text.slice(space + 1);
      if (!isValidSubject(subject)) throw new TypeError(`invalid permission subject ${JSON.stringify(text)}`);
      this.list.insert({ subject, queue });
      if (queue === null) this.plainSubjects.push(subject);
    }
  }

  /** A published subject (literal) matches a rule. */
  matchesPublish(subject: string): boolean {
    return this.list.match(subject).plain.length > 0;
  }

  /**
   * nats-server's Sublist match of a subscribe subject (wildcard tokens in it are matched literally by the
   * rules' wildcards): whether plain rules matched, and whether a queue rule names `queue` when the rules
   * have queue entries (`null` when they have none for this subject).
   */
  matchSubscribe(subject: string, queue: string | null): { plain: boolean; queueMatch: boolean | null } {
    const r = this.list.match(subject);
    if (queue === null || r.queues.length === 0) return { plain: r.plain.length > 0, queueMatch: null };
    for (const group of r.queues) {
      const name = group[0]!.queue!;
      // A queue rule may itself use wildcards ("foo v1.*").
      if (name === queue || (subjectHasWildcard(name) && isValidSubject(queue) && subjectMatchesFilter(queue, name))) {
        return { plain: r.plain.length > 0, queueMatch: true };
      }
    }
    return { plain: r.plain.length > 0, queueMatch: false };
  }
}
