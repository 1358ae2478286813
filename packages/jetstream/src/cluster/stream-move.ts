// `$JS.API.ACCOUNT.STREAM.MOVE.<account>.<stream>` `{"server"?, "cluster"?, "tags"?}` and
// `$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.<account>.<stream>` on the meta leader (nats-server's
// jsLeaderServerStreamMoveRequest / …CancelMoveRequest): the request is read here, the move itself is the
// clustered catalogue's (ClusteredCatalogue.move / cancelMove). The account named must be this catalogue's
// (`$G` without accounts), else 10035.
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { RequestFields, isEmptyRequest, parseRequestBody } from '../api/request-body.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';

export interface StreamMoveRequest {
  /** the server to move a replica off */
  server?: string;
  cluster?: string;
  /** tags the new replicas' servers must have (added to the stream's placement tags for this move) */
  tags?: string[];
}

const GLOBAL_ACCOUNT = '$G';

export class StreamMoves {
  constructor(private readonly cjs: ClusteredJetStream) {}

  /** `t`: the tokens after `$JS.API` (ACCOUNT, STREAM, MOVE|CANCEL_MOVE, account, stream). */
  async serve(t: readonly string[], body: Uint8Array): Promise<object> {
    const op = t[2];
    const account = t[3] ?? '';
    const stream = t[4] ?? '';
    if (account !== (this.cjs.account ?? GLOBAL_ACCOUNT)) throw jsError('JSNoAccountErr');
    const catalogue = this.cjs.catalogue;
    if (catalogue === null) throw JsErrors.streamNotFound();
    if (op === 'CANCEL_MOVE') return catalogue.cancelMove(stream);
    if (isEmptyRequest(body)) throw JsErrors.badRequest();
    const o = parseRequestBody(body);
    const f = new RequestFields(o);
    const rawTags = (o as Record<string, unknown>)['tags'];
    if (rawTags !== undefined && rawTags !== null && (!Array.isArray(rawTags) || rawTags.some((x) => typeof x !== 'string'))) throw JsErrors.invalidJson();
    const req: StreamMoveRequest = {};
    const server = f.string('server');
    const cluster = f.string('cluster');
    if (server !== undefined) req.server = server;
    if (cluster !== undefined) req.cluster = cluster;
    if (Array.isArray(rawTags)) req.tags = rawTags as string[];
    return catalogue.move(stream, req);
  }
}
