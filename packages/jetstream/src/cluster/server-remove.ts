// `$JS.API.SERVER.REMOVE` on the meta leader: `{"peer": "<server name>"}` or `{"peer_id": "<server id>"}`
// peers a server out of the meta group for good (recorded in the catalogue, so it is not taken back in nor given
// replicas) and re-places every stream replica it held, as nats-server's jsLeaderServerRemoveRequest does.
// One removal at a time (10202 while one runs); a server that is not a member is 10044.
import type { NodeId } from '@flotilla/raft';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { RequestFields, isEmptyRequest, parseRequestBody } from '../api/request-body.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';

export class ServerRemoval {
  private inFlight = false;

  constructor(private readonly cjs: ClusteredJetStream) {}

  async remove(body: Uint8Array): Promise<object> {
    if (isEmptyRequest(body)) throw JsErrors.badRequest();
    const f = new RequestFields(parseRequestBody(body));
    const name = f.string('peer') ?? '';
    const serverId = f.string('peer_id') ?? '';
    if (this.inFlight) throw jsError('JSClusterServerMemberChangeInflightErr');
    const id = this.memberNamed(name, serverId);
    if (id === undefined) throw jsError('JSClusterServerNotMemberErr');
    this.inFlight = true;
    try {
      const meta = this.cjs.meta;
      await meta.propose({ op: 'removeNode', raftNodeId: id });
      await this.cjs.catalogue?.replaceServer(id);
      await meta.removeMember(id);
      return { success: true };
    } finally {
      this.inFlight = false;
    }
  }

  /** The meta member by server id (when given, it takes precedence) or server name. */
  private memberNamed(name: string, serverId: string): NodeId | undefined {
    const meta = this.cjs.meta;
    for (const id of meta.members()) {
      if (meta.state.isRemoved(id)) continue;
      if (serverId !== '') {
        const known = meta.state.node(id)?.serverId ?? this.cjs.knownPeers().find((p) => p.raftNodeId === id)?.serverId;
        if (known === serverId || String(id) === serverId) return id;
        continue;
      }
      if (name !== '' && this.cjs.nameOf(id) === name) return id;
    }
    return undefined;
  }
}
