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
 * contract's failed inputs of that service due at once (they may have waited for it).
 */
import type { Transaction } from 'kysely';
import type { Config } from '../../config.ts';
import type { App } from '../../http/typed.ts';
import { currentSecretKey, open, seal } from '../../lib/secret-box.ts';
import { clearDefault, defaultCredential, inputsUsingCredentials, wakeInputs } from '../../store/credentials.ts';
import type { Db } from '../../store/db.ts';
import type { User } from '../../store/filters.ts';
import { type Executor, findRecords, insertRecord, type RecordRow } from '../../store/records.ts';
import type { CredentialRow, Database } from '../../store/tables.ts';
import { recordRoutes } from '../docs.ts';
import { resource, type Spec } from '../resource.ts';
import { presentCredential } from './present.ts';
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

const hints = (secret: Record<string, string>) => JSON.stringify(Object.fromEntries(Object.entries(secret).map(([name, value]) => [name, hintOf(value)])));

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
        secret: seal(sealingKey, JSON.stringify(secret)),
        keyId: sealingKey.id,
        hints: hints(secret),
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
      if (Object.keys(secret).length) {
        const sealingKey = key();
        const merged = { ...(JSON.parse(open(sealingKey, current.secret)) as Record<string, string>), ...secret };
        Object.assign(changes, { secret: seal(sealingKey, JSON.stringify(merged)), keyId: sealingKey.id, hints: hints(merged), status: 'ok', lastError: null });
      }
      return changes;
    },
    async insert(db, row, _by, now, within) {
      await db.transaction().execute(async (trx) => {
        const isDefault = row.isDefault ?? ((await defaultCredential(trx, row.contractId, String(row.service))) ? 0 : 1);
        if (isDefault) await clearDefault(trx, row.contractId, String(row.service), row.id);
        await insertRecord(trx, 'credentials', { ...row, isDefault });
        await wakeInputs(trx, row.contractId, String(row.service), now);
        await within(trx, row.id);
      });
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
      const rows = await findRecords<CredentialRow & RecordRow>(trx, 'credentials', ids);
      for (const service of new Set(rows.map((row) => row.service))) await wakeInputs(trx, contractId, service, Date.now());
    },
  };
  const credentials = resource(db, spec);
  const schema = recordRoutes('credentials', Credential, CredentialCreate, CredentialUpdate);
  app.post('/collection/credentials', { schema: schema.create }, credentials.create);
  app.get('/collection/credentials', { schema: schema.list }, credentials.list);
  app.get('/collection/credentials/:id', { schema: schema.get }, credentials.get);
  app.patch('/collection/credentials/:id', { schema: schema.update }, credentials.update);
  app.delete('/collection/credentials/:id', { schema: schema.remove }, credentials.remove);
  app.delete('/collection/credentials', { schema: schema.removeMany }, credentials.removeMany);
}

