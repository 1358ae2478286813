// Every account of this server, built from `accounts {}`: the global account ($G) takes the server's own
// router (JetStream and core routing with no accounts configured are exactly as before), each configured
// account gets a router of its own, and the imports are wired between them.
import type { AccountOptions } from '../config/options.js';
import { exportCovering } from '../config/account-links.js';
import { MessageRouter } from '../message-router.js';
import { Account, GLOBAL_ACCOUNT_NAME } from './account.js';
import { wireImport } from './account-imports.js';

export class Accounts {
  readonly global: Account;
  private readonly byName = new Map<string, Account>();
  private readonly unwire: Array<() => void> = [];

  constructor(globalRouter: MessageRouter, configured: readonly AccountOptions[] = []) {
    this.global = new Account(GLOBAL_ACCOUNT_NAME, globalRouter);
    this.byName.set(GLOBAL_ACCOUNT_NAME, this.global);
    for (const a of configured) this.byName.set(a.name, new Account(a.name, new MessageRouter()));
    let sid = 1;
    // The config loader checked every link (account-links.ts): each import has its granting export.
    for (const a of configured) {
      const importer = this.byName.get(a.name)!;
      for (const imp of a.imports) {
        const source = configured.find((c) => c.name === imp.account)!;
        const exported = exportCovering(source, imp.kind, imp.subject)!;
        this.unwire.push(wireImport(importer, this.byName.get(imp.account)!, imp, exported, `$sys.import.${sid++}`));
      }
    }
  }

  /** The account called `name`; the global one for a name not configured (never the case after config checks). */
  named(name: string): Account {
    return this.byName.get(name) ?? this.global;
  }

  all(): IterableIterator<Account> {
    return this.byName.values();
  }

  close(): void {
    for (const undo of this.unwire) undo();
    for (const a of this.byName.values()) a.close();
  }
}
