/**
 * Service credentials on {api_url} (docs/api.md#credentials), the shared record operations of
 * `resource.ts`:
 *
 *   POST   /collection/credentials        connect one → 201
 *   GET    /collection/credentials        the contract's credentials (contract_id)
 *   GET    /collection/credentials/{id}   one credential
 *   PATCH  /collection/credentials/{id}   name, default, active, any of the service's fields
 *                                          (a secret sent replaces the stored one); service fixed
 *   DELETE /collection/credentials/{id}   → 204; 409 while an input names it
 *   DELETE /collection/credentials        {"ids": [...]}, all or nothing → 204
 *
 * The secret fields are sealed (`lib/secret-box.ts`) before they reach the store and are never
 * returned. At most one credential per contract and service is its `default`: making one the
 * default takes it from the other; the first credential of a service becomes the default unless
 * the body says `"default": false`. Connecting, changing or removing a credential makes the
 * contract's failed inputs of that service due at once (they may have waited for it). Every read
 * carries the credential's quota where its service has one (`withQuota`, docs/api.md#quotas).
 */
import type { Transaction } from 'kysely';
import type { Config } from '../../config.ts';
import type { App } from '../../http/typed.ts';
import { currentSecretKey, open } from '../../lib/secret-box.ts';
import { clearDefault, inputsUsingCredentials, sealedColumns, insertCredential, wakeInputs } from '../../store/credentials.ts';
import type { Db } from '../../store/db.ts';
import type { User } from '../../store/filters.ts';
import { type Executor, findRecords, type RecordRow } from '../../store/records.ts';
import type { CredentialRow, Database } from '../../store/tables.ts';
import { recordRoutes } from '../schemas.ts';
import { recordOperations, resource, type Spec } from '../resource.ts';
import { presentCredential, withQuota } from './present.ts';
import { Credential, CredentialCreate, credentialFields, credentialRules, CredentialUpdate, hintOf } from './schema.ts';

/** The service's fields of `body`, split into secret and non-secret ones. */
function fieldsOf(service: string, body: Record<string, unknown>) {
  const secret: Record<string, string> = {};
  const plain: Record<string, string> = {};
  for (const [name, isSecret] of Object.entries(credentialFields(service))) {
    const value = body[name];
    if (typeof value === 'string') (isSecret ? secret : plain)[name] = value;
  }
  return { secret, plain };
}


/** Registers the module's routes on `app` (see the module's description). */
export function credentialRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const key = () => currentSecretKey(config);
  const spec: Spec<CredentialRow & RecordRow> = {
    table: 'credentials',
    label: 'credential',
    create: CredentialCreate,
    update: CredentialUpdate,
    present: presentCredential,
    fixed: ['service'],
    rules: (body, current) => credentialRules(body, current?.service ?? String(body.service), !current),
    columns(body, by) {
      const service = String(body.service);
      const { secret, plain } = fieldsOf(service, body);
      const sealingKey = key();
      return {
        service,
        // Decided in `insert`: the first of its service becomes the default.
        isDefault: body.default === undefined ? null : body.default ? 1 : 0,
        settings: JSON.stringify(plain),
        ...sealedColumns(sealingKey, secret),
        expiresAt: plain.expiresAt ? new Date(plain.expiresAt).toISOString() : null,
        connectedById: by.id,
        status: 'ok',
        lastUsed: null,
        lastError: null,
      };
    },
    changes(body, current) {
      const { secret, plain } = fieldsOf(current.service, body);
      const changes: Record<string, unknown> = {};
      if (body.default !== undefined) changes.isDefault = body.default ? 1 : 0;
      if (Object.keys(plain).length) changes.settings = JSON.stringify({ ...JSON.parse(current.settings), ...plain });
      if (plain.expiresAt) changes.expiresAt = new Date(plain.expiresAt).toISOString();
      if (Object.keys(secret).length) {
        const sealingKey = key();
        const merged = { ...(JSON.parse(open(sealingKey, current.secret)) as Record<string, string>), ...secret };
        Object.assign(changes, { ...sealedColumns(sealingKey, merged), status: 'ok', lastError: null });
      }
      return changes;
    },
    async insert(db, row, _by, now, within) {
      await insertCredential(db, row as Parameters<typeof insertCredential>[1], now, within);
      return row.id;
    },
    async onUpdate(trx: Transaction<Database>, current, _by, now, body) {
      if (body.default === true) await clearDefault(trx, current.contractId, current.service, current.id);
      await wakeInputs(trx, current.contractId, current.service, now);
    },
    async users(db: Executor, contractId: string, ids: string[]): Promise<User[]> {
      return (await inputsUsingCredentials(db, contractId, ids)).map((input) => ({ kind: 'input', id: input.id, name: `${input.service} ${input.input}`, uses: input.credentialId! }));
    },
    async onDelete(trx, contractId, ids) {
      const rows = await findRecords<CredentialRow & RecordRow>(trx, 'credentials', contractId, ids);
      for (const service of new Set(rows.map((row) => row.service))) await wakeInputs(trx, contractId, service, Date.now());
    },
  };
  const credentials = resource(db, spec);
  const schema = recordRoutes('credentials', Credential, CredentialCreate, CredentialUpdate);
  // Each credential read shows its quota (docs/api.md#quotas), read at the moment of the response.
  const preSerialization = async (_request: unknown, _reply: unknown, payload: unknown) => withQuota(db, config.quotas, payload);
  recordOperations(app, '/collection/credentials', credentials, schema, { preSerialization });
}

