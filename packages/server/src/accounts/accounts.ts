// Every account of this server, built from `accounts {}`: the global account ($G) takes the server's own
// router (JetStream and core routing with no accounts configured are exactly as before), each configured
// account gets a router of its own, and the imports are wired between them. The system account is one of
// them when configured, else an account of its own that no user is in (`$SYS`, as nats-server makes it).
import type { AccountOptions } from '../config/options.js';
import { exportCovering } from '../config/account-links.js';
import { MessageRouter, type RouterStats } from '../message-router.js';
import { Account, GLOBAL_ACCOUNT_NAME } from './account.js';
import { wireImport } from './account-imports.js';
import { SubjectMappings, type MappingOptions } from './subject-mappings.js';

export class Accounts {
  readonly global: Account;
  /** null with no_system_account */
  readonly system: Account | null;
  private readonly byName = new Map<string, Account>();
  private unwire: Array<() => void> = [];
  /** accounts a reload removed: their routers come back if the account does (the routes and internal clients hold them) */
  private readonly retired = new Map<string, Account>();
  private nextImportSid = 1;

  /** `globalMappings`: the top-level `mappings {}`, which belong to the global account. */
  constructor(
    globalRouter: MessageRouter,
    configured: readonly AccountOptions[] = [],
    systemAccountName: string | null = null,
    globalMappings: readonly MappingOptions[] = [],
  ) {
    this.global = new Account(GLOBAL_ACCOUNT_NAME, globalRouter);
    this.byName.set(GLOBAL_ACCOUNT_NAME, this.global);
    if (globalMappings.length > 0) globalRouter.mappings = new SubjectMappings(globalMappings);
    for (const a of configured) {
      const router = new MessageRouter();
      if (a.mappings !== undefined && a.mappings.length > 0) router.mappings = new SubjectMappings(a.mappings);
      this.byName.set(a.name, new Account(a.name, router, a.limits ?? null));
    }
    if (systemAccountName !== null && !this.byName.has(systemAccountName)) {
      this.byName.set(systemAccountName, new Account(systemAccountName, new MessageRouter()));
    }
    this.system = systemAccountName === null ? null : this.byName.get(systemAccountName)!;
    this.wire(configured);
  }

  /** A config reload's new account (config-reload.ts); wire imports with `rewire` once all are added. */
  add(a: AccountOptions): Account {
    const router = this.retired.get(a.name)?.router ?? new MessageRouter();
    this.retired.delete(a.name);
    router.mappings = a.mappings !== undefined && a.mappings.length > 0 ? new SubjectMappings(a.mappings) : null;
    const account = new Account(a.name, router, a.limits ?? null);
    this.byName.set(a.name, account);
    return account;
  }

  /** A config reload dropped the account (its clients were closed first). Never the global or system account. */
  remove(name: string): void {
    const account = this.byName.get(name);
    if (account === undefined || account === this.global || account === this.system) return;
    this.byName.delete(name);
    account.close();
    this.retired.set(name, account);
  }

  /** A config reload's imports and exports between the same accounts (config-reload.ts): every import wired afresh. */
  rewire(configured: readonly AccountOptions[]): void {
    for (const undo of this.unwire.splice(0)) undo();
    this.wire(configured);
  }

  private wire(configured: readonly AccountOptions[]): void {
    // The config loader checked every link (account-links.ts): each import has its granting export.
    for (const a of configured) {
      const importer = this.byName.get(a.name)!;
      for (const imp of a.imports) {
        const source = configured.find((c) => c.name === imp.account)!;
        const exported = exportCovering(source, imp.kind, imp.subject)!;
        this.unwire.push(wireImport(importer, this.byName.get(imp.account)!, imp, exported, `$sys.import.${this.nextImportSid++}`));
      }
    }
  }

  /** The account called `name`; the global one for a name not configured (never the case after config checks). */
  named(name: string): Account {
    return this.byName.get(name) ?? this.global;
  }

  /** The account called `name`, or undefined (system requests name accounts that may not exist). */
  find(name: string): Account | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<Account> {
    return this.byName.values();
  }

  /**
   * Traffic over every account's router (/varz, /metrics): the global router alone without accounts. A
   * message that crosses an import is counted in each account it is published in.
   */
  totals(): RouterStats {
    if (this.byName.size === 1) return this.global.router.stats;
    const t: RouterStats = { inMsgs: 0, inBytes: 0, outMsgs: 0, outBytes: 0 };
    for (const a of this.byName.values()) {
      const s = a.router.stats;
      t.inMsgs += s.inMsgs;
      t.inBytes += s.inBytes;
      t.outMsgs += s.outMsgs;
      t.outBytes += s.outBytes;
    }
    return t;
  }

  /** Subscriptions in every account's Sublist (imports' internal ones included). */
  subscriptionCount(): number {
    let n = 0;
    for (const a of this.byName.values()) n += a.router.sublist.count;
    return n;
  }

  close(): void {
    for (const undo of this.unwire) undo();
    for (const a of this.byName.values()) a.close();
  }
}
