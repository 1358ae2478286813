// `$JS.API.ACCOUNT.PURGE.<account>` on the meta leader (nats-server's jsLeaderAccountPurgeRequest, clustered):
// every stream of the account is deleted through the catalogue (their consumers with them), answered with
// `{"initiated": true}`. The account named must be this catalogue's (`$G` without accounts); any other has no
// streams here, so nothing is purged (nats-server answers `initiated` for an account without streams too).
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';

const GLOBAL_ACCOUNT = '$G';

export async function purgeAccount(cjs: ClusteredJetStream, account: string): Promise<object> {
  if (/[\\/]/.test(account)) throw jsError('JSStreamGeneralErrorF', { err: 'account name can not contain path separators' });
  const catalogue = cjs.catalogue;
  if (account !== (cjs.account ?? GLOBAL_ACCOUNT) || catalogue === null) return { initiated: true };
  for (const name of catalogue.names(undefined)) {
    await catalogue.delete(name).catch((err: unknown) => {
      // Deleted meanwhile: that is the purge's aim too.
      if ((err as { errCode?: number }).errCode !== JsErrors.streamNotFound().errCode) throw err;
    });
  }
  return { initiated: true };
}
