// The subjects of the system account, as nats-server's events.go names them.

export const DEFAULT_SYSTEM_ACCOUNT = '$SYS';

export const SERVER_PING = '$SYS.REQ.SERVER.PING';
export const serverPing = (endpoint: string): string => `$SYS.REQ.SERVER.PING.${endpoint}`;
export const serverDirect = (serverId: string, endpoint: string): string => `$SYS.REQ.SERVER.${serverId}.${endpoint}`;
/** `$SYS.REQ.ACCOUNT.<acc>.<endpoint>`: the account is token 3 (nats-server's accReqAccIndex). */
export const accountDirect = (account: string, endpoint: string): string => `$SYS.REQ.ACCOUNT.${account}.${endpoint}`;
export const ACCOUNT_REQ_ACCOUNT_TOKEN = 3;
export const ACCOUNT_REQ_TOKENS = 5;
export const accountPing = (endpoint: string): string => `$SYS.REQ.ACCOUNT.PING.${endpoint}`;
export const USER_INFO = '$SYS.REQ.USER.INFO';
export const userDirect = (account: string): string => `$SYS.REQ.USER.${account}.INFO`;

export const connectEvent = (account: string): string => `$SYS.ACCOUNT.${account}.CONNECT`;
export const disconnectEvent = (account: string): string => `$SYS.ACCOUNT.${account}.DISCONNECT`;
export const serverStatsz = (serverId: string): string => `$SYS.SERVER.${serverId}.STATSZ`;
export const serverShutdown = (serverId: string): string => `$SYS.SERVER.${serverId}.SHUTDOWN`;
export const authError = (serverId: string): string => `$SYS.SERVER.${serverId}.CLIENT.AUTH.ERR`;
/** nats-server's account connection-count heartbeat subjects (new and old form). */
export const accountConns = (account: string): string => `$SYS.ACCOUNT.${account}.SERVER.CONNS`;
export const accountConnsOld = (account: string): string => `$SYS.SERVER.ACCOUNT.${account}.CONNS`;
