// The meta leader's catalogue endpoints: INFO, STREAM.CREATE/UPDATE/DELETE/NAMES/LIST/PEER.REMOVE (the stream
// API over the clustered Catalogue port) and META.LEADER.STEPDOWN, plus STREAM.LEADER.STEPDOWN on a stream leader.
import type { StreamApi } from '../api/stream-api.js';
import type { BusMessage } from '../message-bus.js';
import type { LocalReplica } from './clustered-jetstream-replicas.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';
import { ClusterErrors } from './meta-errors.js';
import { requiredApiLevelError } from '../stream/unsupported-headers.js';

export class ClusterApi {
  constructor(private readonly cjs: ClusteredJetStream) {}

  private get streamApi(): StreamApi {
    return this.cjs.js.streamApi;
  }

  /** A catalogue request on the meta leader; `t` are the tokens after `$JS.API`. */
  handle(t: readonly string[], type: string, msg: BusMessage): void {
    const api = this.streamApi;
    const levelError = requiredApiLevelError(msg.header);
    if (levelError !== null) {
      void api.run(type, msg.reply, () => {
        throw levelError;
      });
      return;
    }
    switch (t[0]) {
      case 'INFO':
        void api.accountInfo(msg);
        return;
      case 'META':
        void api.run(type, msg.reply, () => this.metaStepDown());
        return;
    }
    const name = t[2] ?? '';
    switch (t[1]) {
      case 'NAMES':
        void api.names(msg);
        return;
      case 'LIST':
        void api.list(msg);
        return;
      case 'CREATE':
        void api.create(name, msg);
        return;
      case 'UPDATE':
        void api.update(name, msg);
        return;
      case 'DELETE':
        void api.delete(name, msg);
        return;
      case 'PEER':
        void api.removePeer(t[3] ?? '', msg);
        return;
    }
  }

  /** STREAM.LEADER.STEPDOWN on the stream's leader. */
  streamStepDown(replica: LocalReplica, type: string, msg: BusMessage): void {
    void this.streamApi.run(type, msg.reply, () => {
      const err = replica.stepDown();
      if (err !== null) throw err;
      return { success: true };
    });
  }

  private metaStepDown(): object {
    if (!this.cjs.meta.stepDown((id) => this.cjs.isActive(id))) throw ClusterErrors.noReplacementPeer();
    return { success: true };
  }
}
