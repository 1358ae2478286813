// Checks an `accounts {}` block's imports against its exports once every account is known, as nats-server
// does when it loads the config: an import names an account that exists, asks only for what that account
// exports to it (publicly or by name), and a stream import's prefix is literal. Messages are nats-server's.
import { isValidSubject } from '@flotilla/protocol';
import type { AccountExport, AccountOptions } from './options.js';
import { isSubsetMatch } from './subject-subset.js';

/**
 * nats-server's Account.checkAuth for one export and an import of `subject`: the importer's name at the
 * export's account token position; else public, or the importer is named.
 */
function grants(exp: AccountExport, importer: string, subject: string): boolean {
  if (exp.accountTokenPosition !== undefined) return subject.split('.')[exp.accountTokenPosition - 1] === importer;
  return exp.accounts === undefined || exp.accounts.includes(importer);
}

/** The export of `kind` covering `subject` (exact entry first, then any wildcard export that covers it). */
export function exportCovering(account: AccountOptions, kind: AccountExport['kind'], subject: string): AccountExport | undefined {
  const ofKind = account.exports.filter((x) => x.kind === kind);
  return ofKind.find((x) => x.subject === subject) ?? ofKind.find((x) => isSubsetMatch(subject, x.subject));
}

/** Problems, one message each, in nats-server's words; empty when the links are sound. */
export function accountLinkProblems(accounts: readonly AccountOptions[]): string[] {
  const byName = new Map(accounts.map((a) => [a.name, a]));
  const problems: string[] = [];
  for (const acc of accounts) {
    for (const exp of acc.exports) {
      const pos = exp.accountTokenPosition;
      // The position must hold a '*' of the export (where each importer puts its own name).
      if (!isValidSubject(exp.subject) || (pos !== undefined && exp.subject.split('.')[pos - 1] !== '*')) {
        problems.push(`Error adding ${exp.kind} export "${exp.subject}": invalid subject`);
      }
      for (const name of exp.accounts ?? []) {
        if (!byName.has(name)) problems.push(`"${name}" account not defined for ${exp.kind} export`);
      }
    }
  }
  for (const acc of accounts) {
    for (const imp of acc.imports) {
      const source = byName.get(imp.account);
      if (source === undefined) {
        problems.push(`"${imp.account}" account not defined for ${imp.kind} import`);
        continue;
      }
      const local = imp.kind === 'service' ? (imp.to ?? imp.subject) : imp.subject;
      if (!isValidSubject(imp.subject) || !isValidSubject(local)) {
        problems.push(`Error adding ${imp.kind} import "${imp.subject}": invalid subject`);
        continue;
      }
      const exp = exportCovering(source, imp.kind, imp.subject);
      if (exp === undefined || !grants(exp, acc.name, imp.subject)) {
        problems.push(`Error adding ${imp.kind} import "${imp.subject}": ${imp.kind} import not authorized`);
        continue;
      }
      if (imp.prefix !== undefined && /(^|\.)[*>](\.|$)/.test(imp.prefix)) {
        problems.push(`Error adding stream import "${imp.subject}": stream import prefix can not contain wildcard tokens`);
      }
    }
  }
  return problems;
}
