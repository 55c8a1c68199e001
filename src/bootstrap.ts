/**
 * First-start bootstrap (docs/operations.md#first-start): on an empty database, create contract
 * `demo` with collection `news`, a confidential machine client and a user `admin` with a random
 * password, both granted `demo`, and write their credentials to `<DATA_DIR>/credentials.json` (mode
 * 0600). The secrets are written only there, never printed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config.ts';
import { hashSecret, randomToken } from './auth/secrets.ts';
import type { Db } from './store/db.ts';
import { createCollection } from './store/collections.ts';
import { createConsumer } from './store/consumers.ts';
import { createContract, grant } from './store/contracts.ts';

/** Creates the demo and returns the absolute path of the credentials file. */
export async function bootstrapDemo(db: Db, config: Config): Promise<string> {
  const clientId = `demo-${randomToken().slice(0, 16)}`;
  const clientSecret = randomToken();
  const password = randomToken().slice(0, 20);
  const [secretHash, passwordHash] = [await hashSecret(clientSecret), await hashSecret(password)];
  const contract = await createContract(db, 'demo', 'bootstrap');
  const collection = await createCollection(db, contract.id, { name: 'news' }, 'bootstrap');
  const client = await createConsumer(db, {
    type: 'client',
    name: 'demo client',
    email: null,
    language: null,
    username: null,
    passwordHash: null,
    clientId,
    secretHash,
  });
  const user = await createConsumer(db, {
    type: 'user',
    name: 'Administrator',
    email: 'admin@localhost',
    language: 'en',
    username: 'admin',
    passwordHash,
    clientId: null,
    secretHash: null,
  });
  await grant(db, client.id, contract.id);
  await grant(db, user.id, contract.id);

  mkdirSync(config.dataDir, { recursive: true });
  const path = resolve(join(config.dataDir, 'credentials.json'));
  const credentials = {
    contract: contract.slug,
    contract_id: contract.id,
    collection: collection.slug,
    collection_id: collection.id,
    client: { client_id: clientId, client_secret: clientSecret, consumer_id: client.id },
    user: { username: 'admin', password, consumer_id: user.id },
    token_url: `${config.authUrl}/v1/oauth/token`,
  };
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return path;
}
