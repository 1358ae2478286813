// The step-downs a cluster serves: META.LEADER.STEPDOWN on the meta leader and STREAM.LEADER.STEPDOWN on a
// stream's leader. Every other catalogue endpoint is the table's own handler (api/api-endpoints.ts) over the
// clustered Catalogue port, the same code as on one node.
import type { StreamApi } from '../api/stream-api.js';
import type { BusMessage } from '../message-bus.js';
import type { LocalReplica } from './clustered-jetstream-replicas.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';
import { ClusterErrors } from './meta-errors.js';
import { requiredApiLevelError } from '../api/api-level.js';
import { ServerRemoval } from './server-remove.js';
import { StreamMoves } from './stream-move.js';
import { purgeAccount } from './account-purge.js';

export class ClusterApi {
  private readonly removal: ServerRemoval;
  private readonly moves: StreamMoves;

  constructor(private readonly cjs: ClusteredJetStream) {
    this.removal = new ServerRemoval(cjs);
    this.moves = new StreamMoves(cjs);
  }

  /** ACCOUNT.PURGE.<account> on the meta leader (account-purge.ts). */
  accountPurgeRequest(t: readonly string[], type: string, msg: BusMessage): void {
    const levelError = requiredApiLevelError(msg.header);
    void this.streamApi.run(type, msg.reply, () => {
      if (levelError !== null) throw levelError;
      return purgeAccount(this.cjs, t[2] ?? '');
    });
  }

  /** ACCOUNT.STREAM.MOVE / CANCEL_MOVE on the meta leader (stream-move.ts); `t`: the tokens after `$JS.API`. */
  streamMoveRequest(t: readonly string[], type: string, msg: BusMessage): void {
    const levelError = requiredApiLevelError(msg.header);
    void this.streamApi.run(type, msg.reply, () => {
      if (levelError !== null) throw levelError;
      return this.moves.serve(t, msg.data);
    });
  }

  /** SERVER.REMOVE on the meta leader (server-remove.ts). */
  serverRemoveRequest(type: string, msg: BusMessage): void {
    const levelError = requiredApiLevelError(msg.header);
    void this.streamApi.run(type, msg.reply, () => {
      if (levelError !== null) throw levelError;
      return this.removal.remove(msg.data);
    });
  }

  private get streamApi(): StreamApi {
    return this.cjs.js.streamApi;
  }

  /** META.LEADER.STEPDOWN on the meta leader (the one catalogue endpoint with no single-node handler). */
  metaStepDownRequest(type: string, msg: BusMessage): void {
    const levelError = requiredApiLevelError(msg.header);
    void this.streamApi.run(type, msg.reply, () => {
      if (levelError !== null) throw levelError;
      return this.metaStepDown();
    });
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
