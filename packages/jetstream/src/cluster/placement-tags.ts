// Which nodes a stream's replicas may go to under its `placement { cluster, tags }` and the cluster's
// `unique_tag`, as nats-server's selectPeerGroup filters them: every tag named must be on the node, a `!tag`
// must not be, and with a unique tag prefix (say `az:`) no two replicas sit on nodes sharing its value — a node
// without such a tag takes no replica at all. When too few fit, the answer is nats-server's 10005 text naming
// what stood in the way ("no suitable peers for placement, tags not matched ['ssd']").
import type { NodeId } from '@flotilla/raft';
import type { ApiError } from '../api/api-error.js';
import { jsError } from '../api/js-error-table.js';

export interface TaggedNode {
  id: NodeId;
  tags: readonly string[];
}

export interface PlacementRequest {
  /** the stream's placement.tags as given (`!x` excludes x); compared without case */
  tags?: readonly string[] | undefined;
  /** the cluster's `unique_tag` prefix */
  uniqueTag?: string | undefined;
}

/** Why nodes were passed over, in nats-server's words. */
export class PlacementMisfit {
  uniqueTag = false;
  readonly missing = new Set<string>();
  readonly excluded = new Set<string>();

  error(): ApiError {
    let text = 'no suitable peers for placement';
    if (this.uniqueTag) text += ', server tag not unique';
    const list = (s: Set<string>): string => [...s].sort().map((t) => `'${t}'`).join(', ');
    if (this.missing.size > 0) text += `, tags not matched [${list(this.missing)}]`;
    if (this.excluded.size > 0) text += `, tags excluded [${list(this.excluded)}]`;
    return jsError('JSClusterNoPeersErrF', { err: text });
  }
}

export class PlacementRules {
  private readonly required: string[] = [];
  private readonly forbidden: string[] = [];
  /** the unique tag prefix in force (none when the placement names a tag with that prefix, as nats-server) */
  readonly uniquePrefix: string | undefined;

  constructor(request: PlacementRequest) {
    for (const raw of request.tags ?? []) {
      const t = raw.trim().toLowerCase();
      if (t.startsWith('!')) this.forbidden.push(t.slice(1));
      else if (t !== '') this.required.push(t);
    }
    const prefix = request.uniqueTag?.toLowerCase();
    this.uniquePrefix = prefix === undefined || prefix === '' || this.required.some((t) => t.startsWith(prefix)) ? undefined : prefix;
  }

  get constrained(): boolean {
    return this.required.length > 0 || this.forbidden.length > 0 || this.uniquePrefix !== undefined;
  }

  /** Whether the node's tags allow a replica; what stood in the way goes to `misfit`. */
  fits(node: TaggedNode, misfit?: PlacementMisfit): boolean {
    const tags = new Set(node.tags.map((t) => t.toLowerCase()));
    for (const t of this.forbidden) {
      if (tags.has(t)) {
        misfit?.excluded.add(t);
        return false;
      }
    }
    for (const t of this.required) {
      if (!tags.has(t)) {
        misfit?.missing.add(t);
        return false;
      }
    }
    if (this.uniquePrefix !== undefined && this.zoneOf(node) === undefined) {
      if (misfit !== undefined) misfit.uniqueTag = true;
      return false;
    }
    return true;
  }

  /** The node's value of the unique tag (its failure domain), undefined without one or without a prefix. */
  zoneOf(node: TaggedNode): string | undefined {
    const prefix = this.uniquePrefix;
    if (prefix === undefined) return undefined;
    return node.tags.map((t) => t.toLowerCase()).find((t) => t.startsWith(prefix));
  }
}
