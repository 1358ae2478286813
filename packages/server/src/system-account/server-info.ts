// The `server` object every system message carries (nats-server's ServerInfo): who sent it, with a
// sequence number that goes up by one per message this server sends and the time it was sent.
import type { FlotillaServer } from '../server.js';
import { ADVERTISED_NATS_VERSION } from '../version.js';

/** nats-server's capability bit for JetStream (ServerCapability JetStreamEnabled). */
const JETSTREAM_ENABLED_FLAG = 1;

export class ServerInfoStamp {
  private seq = 0;

  constructor(private readonly server: FlotillaServer) {}

  /** A fresh `server` object: the next sequence number and the current time. */
  next(): Record<string, unknown> {
    const s = this.server;
    const js = s.jetstream !== null;
    const cluster = s.cluster?.node.clusterName || s.options.cluster?.name;
    const domain = s.options.jetstream.domain;
    return {
      name: s.serverName,
      host: s.options.host,
      id: s.serverId,
      ...(cluster ? { cluster } : {}),
      ...(domain ? { domain } : {}),
      ver: ADVERTISED_NATS_VERSION,
      jetstream: js,
      flags: js ? JETSTREAM_ENABLED_FLAG : 0,
      seq: ++this.seq,
      time: new Date().toISOString(),
    };
  }
}
