// An operator with a system account and accounts, their JWTs made by @nats-io/jwt (as nsc makes them),
// and the config text that trusts the operator with a MEMORY or full resolver — for the jwt-* tests.
import { createAccount, createOperator, createUser, encodeAccount, encodeOperator, encodeUser, fmtCreds, type Account, type KeyPair, type User } from '@nats-io/jwt';

export const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

export interface TestAccount {
  kp: KeyPair;
  pub: string;
  jwt: string;
}

export class TestOperator {
  readonly kp = createOperator();
  readonly signingKp = createOperator();
  readonly system: TestAccount;
  jwt = '';
  private constructor(system: TestAccount) {
    this.system = system;
  }

  static async create(): Promise<TestOperator> {
    const sysKp = createAccount();
    const op = new TestOperator({ kp: sysKp, pub: sysKp.getPublicKey(), jwt: '' });
    op.jwt = await encodeOperator('OP', op.kp, { signing_keys: [op.signingKp.getPublicKey()], system_account: sysKp.getPublicKey() });
    op.system.jwt = await op.signAccount('SYS', sysKp, {});
    return op;
  }

  /** An account JWT signed by the operator's signing key (as nsc does by default). */
  signAccount(name: string, kp: KeyPair, claims: Partial<Account>, opts: { exp?: number } = {}): Promise<string> {
    // nsc writes every limit (-1: none); a missing one is 0 to the server
    const limits = { ...UNLIMITED, ...(claims.limits ?? {}) };
    return encodeAccount(name, kp, { ...claims, limits } as Partial<Account>, { signer: this.signingKp, ...opts });
  }

  async account(name: string, claims: Partial<Account> = {}, opts: { exp?: number } = {}): Promise<TestAccount> {
    const kp = createAccount();
    return { kp, pub: kp.getPublicKey(), jwt: await this.signAccount(name, kp, claims, opts) };
  }

  /** Config for one server: this operator, its system account, a resolver preloaded with `accounts`. */
  conf(accounts: readonly TestAccount[], resolver = 'MEMORY'): string {
    const preload = [this.system, ...accounts].map((a) => `  ${a.pub}: "${a.jwt}"`).join('\n');
    return `operator: "${this.jwt}"\nsystem_account: ${this.system.pub}\nresolver: ${resolver}\nresolver_preload: {\n${preload}\n}\n`;
  }
}

export interface TestUser {
  kp: KeyPair;
  jwt: string;
  /** the `.creds` file text (JWT and seed) */
  creds: Uint8Array;
}

/** A user of `account`, issued by `signer` (default the account's own key). */
export async function testUser(account: TestAccount, claims: Partial<User> = {}, opts: { exp?: number; signer?: KeyPair; scoped?: boolean; name?: string; kp?: KeyPair } = {}): Promise<TestUser> {
  const kp = opts.kp ?? createUser();
  const encodeOpts = {
    ...(opts.exp !== undefined ? { exp: opts.exp } : {}),
    ...(opts.signer !== undefined ? { signer: opts.signer } : {}),
    ...(opts.scoped === true ? { scopedUser: true } : {}),
  };
  const jwt = await encodeUser(opts.name ?? 'u', kp, opts.signer !== undefined ? account.pub : account.kp, claims, encodeOpts);
  return { kp, jwt, creds: fmtCreds(jwt, kp) };
}
