/**
 * Credential row → the credential of docs/api.md#credentials: the common record fields, the
 * service, `default`, the non-secret fields, a masked hint per secret field, who connected it and
 * when, and its health (with when its token expires). The secret fields never leave the store in the clear: they are not read here.
 */
import type { CredentialRow } from '../../store/tables.ts';
import { recordFields } from '../docs.ts';

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
