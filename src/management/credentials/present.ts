/**
 * Credential row → the credential of docs/api.md#credentials: the common record fields, the
 * service, `default`, the non-secret fields, a masked hint per secret field, who connected it and
 * when, and its health (with when its token expires). The secret fields never leave the store in the clear: they are not read here.
 */
import type { Db } from '../../store/db.ts';
import { serviceModule } from '../../services/index.ts';
import { quotaAt, type QuotaSettings } from '../../services/module.ts';
import { quotaOf } from '../../store/quotas.ts';
import type { CredentialRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';

/** The row as the API presents it (see the module's description). */
export function presentCredential(row: CredentialRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    service: row.service,
    default: row.isDefault === 1,
    ...(JSON.parse(row.settings) as Record<string, string>),
    hints: JSON.parse(row.hints) as Record<string, string>,
    connectedBy: { id: row.connectedById, name: row.createdBy, date: row.created },
    health: { status: row.status === 'failed' ? 'failed' : 'ok', lastUsed: row.lastUsed, lastError: row.lastError, expiresAt: row.expiresAt ?? null },
    ...recordFields(row),
  };
}

/**
 * A presented credential (or a list of them) with its service's `quota` added where the service has
 * one (docs/api.md#quotas): `{name, used, limit, resetsAt}` at `now`. Anything else (an error
 * object) is returned as it is. Runs before serialization, as the record operations present rows
 * without reading the database again.
 */
export async function withQuota(db: Db, settings: QuotaSettings, payload: unknown, now = Date.now()): Promise<unknown> {
  if (Array.isArray(payload)) return Promise.all(payload.map((entry) => withQuota(db, settings, entry, now)));
  const credential = payload as Record<string, unknown> | null;
  if (!credential || typeof credential._id !== 'string' || typeof credential.service !== 'string') return payload;
  const quota = await quotaOf(db, quotaAt(serviceModule(credential.service)?.quota, settings, now), credential._id, now);
  return quota ? { ...credential, quota } : credential;
}
