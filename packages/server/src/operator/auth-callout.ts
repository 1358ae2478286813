// Auth callout (nats-server 2.10, config mode): a client that is not one of `auth_users` is authorized by an
// external service. The server signs an authorization request JWT with its own nkey (sub: the issuer, aud
// "nats-authorization-request", the client's CONNECT options and a fresh user nkey to answer for), publishes
// it to `$SYS.REQ.USER.AUTH` in the callout account, sealed to the service's curve key when `xkey` is set
// (the server's own curve key in the `Nats-Server-Xkey` header), and waits up to the auth timeout for an
// authorization response JWT (sub: that user nkey, aud: this server) holding a user JWT signed by `issuer`
// whose `aud` names the account to place the client in. Any error, mismatch or timeout refuses the client.
// nats-server's processClientOrLeafCallout.
import { randomBytes } from 'node:crypto';
import nkeys, { type KeyPair } from '@nats-io/nkeys';
import type { FlotillaServer } from '../server.js';
import { ADVERTISED_NATS_VERSION } from '../version.js';
import { GLOBAL_ACCOUNT_NAME } from '../accounts/account.js';
import type { AuthCalloutOptions } from '../config/auth-callout-keys.js';
import { UserPermissions } from '../security/user-permissions.js';
import { InternalClient } from '../system-account/internal-client.js';
import { JwtError, signJwt, verifyJwt, type JwtClaims, type UserClaims } from './nats-jwt.js';
import { claimsAdmit, effectiveClaims, permissionsOf, type ConnectionKind } from './operator-auth.js';
import { accountIssuers } from './account-from-claims.js';

export const AUTH_CALLOUT_SUBJECT = '$SYS.REQ.USER.AUTH';
const AUTH_REQUEST_AUDIENCE = 'nats-authorization-request';
const XKEY_HEADER = 'Nats-Server-Xkey';

export interface CalloutClient {
  cid: number;
  ip: string;
  nonce: string | null;
  kind: ConnectionKind;
}

export interface CalloutResult {
  user: string;
  account: string | undefined;
  permissions: UserPermissions | null;
  expiresAtMs: number | null;
}

export class AuthCallout {
  /** the server's curve key pair, made when requests are to be sealed */
  private readonly xkp: KeyPair | null;

  private readonly timeoutMs: number;

  constructor(
    readonly options: AuthCalloutOptions,
    private readonly server: FlotillaServer,
    /** operator mode: accounts and issuers come from the account JWTs */
    private readonly operatorMode = false,
  ) {
    this.xkp = options.xkey !== undefined ? nkeys.createCurve() : null;
    this.timeoutMs = Math.round((server.options.authorization?.timeoutSec ?? 2) * 1000);
  }

  private warn(message: string): void {
    this.server.log.warn(message);
  }

  /** true for the service's own users, which authenticate from the config instead */
  bypasses(user: string): boolean {
    return this.options.authUsers.includes(user);
  }

  /**
   * Operator mode: the callout of `accountKey` when its JWT has `authorization { auth_users }` and `user` is
   * not one of them; undefined otherwise. The account signs (or its signing keys sign) the answers.
   */
  static ofAccount(server: FlotillaServer, accountKey: string, user: string): AuthCallout | undefined {
    const claims = server.auth.operator?.accounts.get(accountKey);
    const ext = claims?.nats.authorization;
    const authUsers = ext?.auth_users ?? [];
    if (ext === undefined || authUsers.length === 0 || authUsers.includes(user)) return undefined;
    const options: AuthCalloutOptions = { issuer: accountKey, authUsers, account: accountKey };
    if (ext.xkey !== undefined && ext.xkey !== '') options.xkey = ext.xkey;
    if (ext.allowed_accounts !== undefined && ext.allowed_accounts !== null) options.allowedAccounts = ext.allowed_accounts;
    return new AuthCallout(options, server, true);
  }

  authorize(creds: Record<string, unknown>, client: CalloutClient): Promise<CalloutResult | null> {
    const account = this.server.accounts.find(this.options.account ?? GLOBAL_ACCOUNT_NAME);
    if (account === undefined) {
      this.warn(`No valid account "${this.options.account}" for auth callout request`);
      return Promise.resolve(null);
    }
    const ukp = nkeys.createUser();
    const userKey = ukp.getPublicKey();
    const reply = `_INBOX.${randomBytes(12).toString('base64url')}`;
    const bus = new InternalClient(account.router, (err) => this.warn(`auth callout response failed: ${(err as Error).message}`));
    return new Promise<CalloutResult | null>((resolve) => {
      let done = false;
      const finish = (r: CalloutResult | null, why?: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        bus.close();
        if (why !== undefined) this.warn(why);
        resolve(r);
      };
      const timer = setTimeout(() => finish(null, `Authorization callout response not received in time on account "${account.name}"`), this.timeoutMs);
      timer.unref();
      bus.subscribe(reply, (r) => {
        try {
          finish(this.decode(r.body, userKey, client));
        } catch (err) {
          finish(null, err instanceof Error ? err.message : String(err));
        }
      });
      const request = this.request(creds, client, userKey);
      let body = Buffer.from(request);
      let header: Buffer | null = null;
      if (this.xkp !== null) {
        body = Buffer.from(this.xkp.seal(body, this.options.xkey!));
        header = Buffer.from(`NATS/1.0\r\n${XKEY_HEADER}: ${this.xkp.getPublicKey()}\r\n\r\n`);
      }
      const message = header === null ? body : Buffer.concat([header, body]);
      if (account.router.publish(AUTH_CALLOUT_SUBJECT, reply, header === null ? -1 : header.length, message, 0, true) === 0) {
        finish(null, `auth callout: no service listens on ${AUTH_CALLOUT_SUBJECT} in account "${account.name}"`);
      }
    });
  }

  private request(creds: Record<string, unknown>, client: CalloutClient, userKey: string): string {
    const s = this.server;
    const nowSec = Math.floor(Date.now() / 1000);
    const str = (k: string): string | undefined => (typeof creds[k] === 'string' && creds[k] !== '' ? (creds[k] as string) : undefined);
    const connectOpts: Record<string, unknown> = {};
    for (const [from, to] of [
      ['jwt', 'jwt'],
      ['nkey', 'nkey'],
      ['sig', 'sig'],
      ['auth_token', 'auth_token'],
      ['user', 'user'],
      ['pass', 'pass'],
      ['name', 'name'],
      ['lang', 'lang'],
      ['version', 'version'],
    ] as const) {
      const v = str(from);
      if (v !== undefined) connectOpts[to] = v;
    }
    connectOpts['protocol'] = typeof creds['protocol'] === 'number' ? creds['protocol'] : 0;
    const clientInfo: Record<string, unknown> = { host: client.ip, id: client.cid, kind: 'Client', type: client.kind === 'WEBSOCKET' ? 'websocket' : 'nats' };
    if (str('user') !== undefined) clientInfo['user'] = str('user');
    if (str('name') !== undefined) clientInfo['name'] = str('name');
    if (connectOpts['sig'] !== undefined && client.nonce !== null) clientInfo['nonce'] = client.nonce;
    const serverInfo: Record<string, unknown> = { name: s.serverName, host: s.options.host, id: s.serverId, version: ADVERTISED_NATS_VERSION };
    if (s.options.cluster?.name !== undefined) serverInfo['cluster'] = s.options.cluster.name;
    if (this.xkp !== null) serverInfo['xkey'] = this.xkp.getPublicKey();
    const claims = {
      jti: randomBytes(16).toString('hex'),
      iat: nowSec,
      exp: nowSec + Math.max(1, Math.ceil(this.timeoutMs / 1000)),
      iss: s.serverId,
      sub: this.options.issuer,
      aud: AUTH_REQUEST_AUDIENCE,
      nats: { server_id: serverInfo, user_nkey: userKey, client_info: clientInfo, connect_opts: connectOpts, type: 'authorization_request', version: 2 },
    };
    return signJwt(claims, s.serverKeys);
  }

  /** The placed user of a response, or an Error naming why not (nats-server's decodeResponse and processReply). */
  private decode(body: Buffer, userKey: string, client: CalloutClient): CalloutResult {
    let text = body.toString('utf8').trim();
    if (text === '') throw new Error('auth callout violation: "no reason supplied"');
    let encrypted = false;
    if (this.xkp !== null && !text.startsWith('eyJ')) {
      encrypted = true;
      const opened = this.xkp.open(body, this.options.xkey!);
      if (opened === null) throw new Error('error decrypting auth callout response');
      text = Buffer.from(opened).toString('utf8').trim();
    }
    let resp;
    try {
      resp = verifyJwt<{ jwt?: string; error?: string; issuer_account?: string }>(text, 'authorization_response');
    } catch (err) {
      throw new Error(`authorization response had validation errors: ${(err as JwtError).message}`);
    }
    if (resp.sub !== userKey) throw new Error('auth callout violation: auth callout response is not for expected user');
    if (resp.aud !== this.server.serverId) throw new Error('auth callout violation: auth callout response is not for server');
    if (resp.nats.error !== undefined && resp.nats.error !== '') throw new Error(`auth callout service returned an error: ${resp.nats.error}`);
    const user = verifyJwt<UserClaims>(resp.nats.jwt ?? '', 'user');
    if (this.operatorMode) return this.placeInOperatorMode(resp, user, encrypted, userKey, client);
    if (user.nats.issuer_account !== undefined && user.nats.issuer_account !== '') throw new Error('error non operator mode account: attempted to use issuer_account');
    if (user.iss !== this.options.issuer) throw new Error(`wrong issuer for auth callout response, expected "${this.options.issuer}" got "${user.iss}"`);
    if (user.sub !== userKey) throw new Error(`Expected authorized user of "${userKey}" but got "${user.sub}"`);
    if (!claimsAdmit(user.nats, client.ip, client.kind, Date.now())) throw new Error('authorized user outside of valid connect times, sources or connection types');
    const placement = user.aud ?? '';
    const target = this.server.accounts.find(placement);
    if (target === undefined) throw new Error(`no valid account "${placement}" for auth callout response`);
    const permissions = permissionsOf(user.nats);
    // a client placed in the callout account may not publish auth requests itself
    if (target.name === (this.options.account ?? GLOBAL_ACCOUNT_NAME)) {
      const p = permissions ?? {};
      p.publish = { ...(p.publish ?? {}), deny: [...(p.publish?.deny ?? []), AUTH_CALLOUT_SUBJECT] };
      return this.result(user, target.name, p);
    }
    return this.result(user, target.name, permissions);
  }

  /** nats-server's operator-mode rules: the account (or an allowed one) issued the user, placed in the issuing account. */
  private placeInOperatorMode(resp: JwtClaims<{ issuer_account?: string }>, user: JwtClaims<UserClaims>, encrypted: boolean, userKey: string, client: CalloutClient): CalloutResult {
    const operator = this.server.auth.operator!;
    const home = this.options.issuer;
    const homeClaims = operator.accounts.get(home);
    if (homeClaims === undefined) throw new Error(`auth callout account "${home}" is gone`);
    if (!encrypted) {
      const signer = resp.nats.issuer_account || resp.iss;
      if (signer !== home && !accountIssuers(homeClaims).has(signer)) throw new Error('auth callout signing key is unknown');
    }
    const issuerAccount = user.nats.issuer_account || user.iss;
    const allowed = this.options.allowedAccounts ?? [];
    // nats-server's isAllowedAcount: a lone "*" allows any account, otherwise an exact match
    const anyAllowed = allowed.length === 1 && allowed[0] === '*';
    if (issuerAccount !== home && !anyAllowed && !allowed.includes(issuerAccount)) {
      throw new Error(`account "${user.iss}" not permitted as valid account option for auth callout for account "${home}"`);
    }
    const target = operator.accounts.get(issuerAccount);
    if (target === undefined || this.server.accounts.find(issuerAccount) === undefined) throw new Error(`no valid account "${issuerAccount}" for auth callout response`);
    if (!accountIssuers(target).has(user.iss)) throw new Error(`user JWT issuer "${user.iss}" is not known`);
    if (user.sub !== userKey) throw new Error(`Expected authorized user of "${userKey}" but got "${user.sub}"`);
    const claims = effectiveClaims(user, target);
    if (!claimsAdmit(claims, client.ip, client.kind, Date.now())) throw new Error('authorized user outside of valid connect times, sources or connection types');
    const permissions = permissionsOf(claims) ?? permissionsOf(target.nats.default_permissions ?? {});
    if (issuerAccount === home) {
      const p = permissions ?? {};
      p.publish = { ...(p.publish ?? {}), deny: [...(p.publish?.deny ?? []), AUTH_CALLOUT_SUBJECT] };
      return this.result(user, issuerAccount, p);
    }
    return this.result(user, issuerAccount, permissions);
  }

  private result(user: ReturnType<typeof verifyJwt<UserClaims>>, account: string, permissions: ReturnType<typeof permissionsOf>): CalloutResult {
    return {
      user: user.name !== undefined && user.name !== '' ? user.name : user.sub,
      account: account === GLOBAL_ACCOUNT_NAME ? undefined : account,
      permissions: permissions === null ? null : new UserPermissions(permissions),
      expiresAtMs: typeof user.exp === 'number' && user.exp > 0 ? user.exp * 1000 : null,
    };
  }
}
