/**
 * The refresh of a connected credential's access token ahead of its expiry
 * (docs/api.md#connecting-an-account): before a poll uses a credential whose token expires within
 * `REFRESH_MARGIN_MS`, the refresh grant (RFC 6749 §6) runs once and the new tokens are stored,
 * sealed, before the poll reads them.
 *
 * - A service whose module has its own refresh (`connect.refresh`, Threads' `th_refresh_token`):
 *   that refresh runs instead, its `marginMs` before expiry, without a refresh token; refused for
 *   good, it is not asked again while the credential is `failed` (a reconnect makes it `ok`).
 * - Once: per process, concurrent polls of one credential share one refresh; across processes on
 *   PostgreSQL, the row is locked while one refreshes (`store/credentials.ts`
 *   `changeCredentialLocked`) and the next sees the token no longer due.
 * - Refused for good (`invalid_grant`, `invalid_client`, `unauthorized_client`: revoked, expired,
 *   the app changed): the credential is marked `failed` with the reason, its refresh token is
 *   dropped (it will not work again, so later polls do not ask again), and the poll fails with a
 *   permanent `SourceError` saying to connect again.
 * - Any other failure (network, a 5xx): nothing changes; the poll goes ahead with the current
 *   token and the next poll tries again.
 */
import type { OAuthAppSettings } from '../config.ts';
import { OAuthRefusal, refreshTokens } from '../lib/oauth-client.ts';
import { currentSecretKey, open } from '../lib/secret-box.ts';
import { serviceModule } from '../services/index.ts';
import { idParameter, OAUTH, type OAuthService } from '../services/table.ts';
import { changeCredentialLocked, sealedColumns } from '../store/credentials.ts';
import type { Db } from '../store/db.ts';
import type { CredentialRow } from '../store/tables.ts';
import { SourceError, type SourceFetch } from '../services/connector.ts';

/** A token expiring within this many ms is refreshed before a poll uses it (5 minutes). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** OAuth error codes (RFC 6749 §5.2) that say the refresh token or the app will not work again. */
const FOR_GOOD = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/** What the refresh reads of the configuration. */
export interface RefreshSettings {
  secretKey: string | undefined;
  dataDir: string;
  oauth?: Partial<Record<string, OAuthAppSettings>>;
}

/** The service's own refresh (its module's `connect.refresh`), or undefined for the refresh grant. */
const ownRefresh = (service: string) => serviceModule(service)?.connect?.refresh;

/** Whether `row`'s token expires within the margin of `now` (ms): its service's own margin, else `REFRESH_MARGIN_MS`. */
export function refreshDue(row: Pick<CredentialRow, 'expiresAt' | 'service'>, now: number): boolean {
  return row.expiresAt !== null && Date.parse(row.expiresAt) - now <= (ownRefresh(row.service)?.marginMs ?? REFRESH_MARGIN_MS);
}

/** The refresher of the module's rules for `db` (one refresh per credential at a time in this process). */
export function createTokenRefresher(db: Db, settings: RefreshSettings) {
  const running = new Map<string, Promise<CredentialRow>>();

  async function refresh(row: CredentialRow, fetch: SourceFetch, now: number): Promise<CredentialRow> {
    const service = row.service as OAuthService;
    const flow = Object.hasOwn(OAUTH, service) ? OAUTH[service] : undefined;
    const app = settings.oauth?.[service];
    if (!flow || !app?.clientId || !app.clientSecret) return row;
    const endpoint = { authorizeUrl: app.authorizeUrl, tokenUrl: app.tokenUrl, clientId: app.clientId, clientSecret: app.clientSecret, clientAuth: flow.clientAuth, ...idParameter(flow) };
    const own = ownRefresh(service);
    const key = currentSecretKey(settings);
    let refused: string | undefined;
    const after = await changeCredentialLocked(db, row.contractId, row.id, async (locked) => {
      if (!refreshDue(locked, now)) return undefined; // another process refreshed it meanwhile
      const values = JSON.parse(open(key, locked.secret)) as Record<string, string>;
      // Refused for good before: the refresh token was dropped; a service's own refresh (no refresh token) is not asked again on a failed credential.
      if (own ? locked.status === 'failed' : !values.refreshToken) return undefined;
      try {
        const tokens = own ? await own.token(values, { endpoint, fetch, now }) : await refreshTokens(endpoint, fetch, values.refreshToken!, now);
        const next: Record<string, string> = { ...values, [flow.field]: tokens.accessToken };
        const refreshToken = tokens.refreshToken ?? values.refreshToken;
        if (refreshToken) next.refreshToken = refreshToken; // none with the service's own refresh
        return { ...sealedColumns(key, next), expiresAt: tokens.expiresAt ?? null };
      } catch (error) {
        if (!(error instanceof OAuthRefusal) || !FOR_GOOD.has(error.error)) throw error;
        refused = `the service refused to refresh the token (${error.message}): connect the account again`;
        const { refreshToken: _dropped, ...rest } = values;
        return { ...sealedColumns(key, rest), status: 'failed', lastError: refused };
      }
    });
    if (refused) throw new SourceError(`credential ${row.id} (${row.name}): ${refused}`, { permanent: true });
    return after ?? row;
  }

  return {
    /**
     * `row` as the poll should use it: unchanged when its token is not due (or cannot be
     * refreshed), else after the refresh. Throws a permanent `SourceError` when the service
     * refused the refresh for good; keeps `row` on any other failure.
     */
    async fresh(row: CredentialRow, fetch: SourceFetch | undefined, now = Date.now()): Promise<CredentialRow> {
      if (!fetch || !refreshDue(row, now)) return row;
      let pending = running.get(row.id);
      if (!pending) {
        pending = refresh(row, fetch, now).finally(() => running.delete(row.id));
        running.set(row.id, pending);
      }
      try {
        return await pending;
      } catch (error) {
        if (error instanceof SourceError) throw error;
        return row;
      }
    },
  };
}
