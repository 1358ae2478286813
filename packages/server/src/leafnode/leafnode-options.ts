// `leafnodes {}` as Flotilla serves it: a listener other servers attach to as leafs, and remotes this server
// attaches to (nats-server's LeafNodeOpts / RemoteLeafOpts, the parts implemented).

/** A user a hub accepts on its leafnode port, bound to an account. */
export interface LeafUserOptions {
  user: string;
  password: string;
  /** the account the leaf's interest and messages belong to (default: the global account) */
  account?: string;
}

export interface LeafRemoteOptions {
  /** `nats-leaf://` / `nats://` URLs with optional user:password@ or token@; tried in turn */
  urls: string[];
  /** the local account bound to this link (default: the global account) */
  account?: string;
}

export interface LeafNodeOptions {
  host: string;
  /** 0: no listener (remotes only) */
  port: number;
  /** accept-side credentials; none: any leaf connects into `authAccount` */
  users: LeafUserOptions[];
  /** the account a leaf that authenticates with the block's single user/password (or no auth) binds to */
  authAccount?: string;
  remotes: LeafRemoteOptions[];
  /** `reconnect` / `reconnect_delay`: wait between attempts of a remote (nats-server default 1s) */
  reconnectMs: number;
  /** `authorization { timeout }`: how long an accepted leaf has to authenticate; absent: the link's own bound */
  authTimeoutMs?: number;
}
