/**
 * The operator CLI (docs/operations.md#cli), run as `npm run --silent sluice -- <command>`. Every
 * command prints one JSON document on stdout; a failure prints an error object on stderr and exits
 * 1. The commands are the table `COMMANDS` (and `admin`'s, `ADMIN`): each a synopsis, as
 * docs/operations.md#cli lists it, and a small function that parses its options (node:util
 * parseArgs) and works through the store.
 *
 * The long commands (backup, restore, export, import) draw a progress bar on standard error when
 * it is a terminal, and none otherwise.
 */
import { createReadStream, createWriteStream, existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { Presets, SingleBar } from 'cli-progress';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROLES, type Role } from './app.ts';
import { CONSOLE_CLIENT_ID, consoleUrl } from './first-party.ts';
import { hashSecret, randomToken } from './auth/secrets.ts';
import { type Config, ConfigError, loadConfig, maskedConfig } from './config.ts';
import { ApiError, conflictError, forbiddenError, notFoundError, validationError, VALIDATION_CODES } from './errors.ts';
import { greeting, type GreetingFacts } from './greeting.ts';
import { type Server, serve } from './server.ts';
import { COLLECTION_TYPES, createCollection, DEFAULT_DEDUPE } from './store/collections.ts';
import { createConsumer, disableConsumer, emailTaken, findConsumerByRef, setPasswordHash } from './store/consumers.ts';
import { OPERATOR } from './store/audit.ts';
import { createContract, findContract, grant, GRANT_ROLES, isGrantRole, revokeGrant, setContractFilter } from './store/contracts.ts';
import { parseScope, type Scope, SCOPES } from './store/tokens.ts';
import { nameTaken } from './store/records.ts';
import { type Db, isUniqueViolation, openDb } from './store/db.ts';
import { filterOwner } from './store/filters.ts';
import { checkSecretKey, resealCredentials } from './store/credentials.ts';
import { forgetKeyFiles, generateSecretKey, KEY_FILE, keyFilePath, parseSecretKey, writeKeyFile } from './lib/secret-box.ts';
import { DEDUPE_MODES } from './lib/item-keys.ts';
import { ensureSchema, migrateToLatest, schemaState } from './store/migrate.ts';
import { backupSqlite, restoreSqlite } from './store/backup.ts';
import { exportContract, importContract, type Progress } from './store/contract-transfer.ts';
import type { ConsumerRow, ContractRow } from './store/tables.ts';

const BY = 'operator';
/** An e-mail address as far as the operator's typing goes: one `@`, something on each side, no spaces. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * One command of the CLI: `usage`, its synopsis as docs/operations.md#cli lists it; `run`, its
 * work on the rest of the command line, resolving to the JSON document to print, or to undefined
 * when the command wrote its own output (serve, export to standard output). Failures are thrown
 * as the interface's errors (`errors.ts`).
 */
interface Command {
  usage: string;
  run(args: string[], config: Config): Promise<unknown>;
}

function usage(message: string): ApiError {
  return validationError([{ propertyName: 'command', message, code: VALIDATION_CODES.required }]);
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || !value.trim()) {
    throw validationError([{ propertyName: `--${name}`, message: `--${name} is required`, code: VALIDATION_CODES.required }]);
  }
  return value.trim();
}

async function withDb<T>(config: Config, work: (db: Db) => Promise<T>): Promise<T> {
  const db = openDb(config.databaseUrl);
  try {
    await ensureSchema(db);
    return await work(db);
  } finally {
    await db.destroy();
  }
}

async function contractOf(db: Db, idOrSlug: string): Promise<ContractRow> {
  const contract = await findContract(db, idOrSlug);
  if (!contract) throw notFoundError(`No contract ${idOrSlug}.`, '--contract', idOrSlug);
  return contract;
}

async function consumerOf(db: Db, ref: string): Promise<ConsumerRow> {
  const consumer = await findConsumerByRef(db, ref);
  if (!consumer) throw notFoundError(`No consumer ${ref}.`, '--consumer', ref);
  return consumer;
}

async function readPassword(): Promise<string> {
  if (process.env.SLUICE_PASSWORD) return process.env.SLUICE_PASSWORD;
  if (process.stdin.isTTY) process.stderr.write('Password (end with Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** The new password of `user create` and `user set-password`: SLUICE_PASSWORD or standard input, at least 8 characters. */
async function newPassword(): Promise<string> {
  const password = await readPassword();
  if (password.length < 8) throw validationError([{ propertyName: 'password', message: 'the password must have at least 8 characters', code: VALIDATION_CODES.range }]);
  return password;
}

function presentRecord(row: ContractRow | Awaited<ReturnType<typeof createCollection>>): Record<string, unknown> {
  const { id, active, filterId, ...rest } = row;
  return { _id: id, ...rest, ...(filterId ? { filterId } : {}), active: active === 1 };
}

/** `admin contract create`: a new contract, its slug made from the name. */
async function contractCreate(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' } } });
  const name = required(values, 'name');
  return withDb(config, async (db) => presentRecord(await createContract(db, name, BY)));
}

/** `admin contract set-filter`: the contract's filter, used for items whose input and collection name none (docs/filters.md#governing-filter). */
async function contractSetFilter(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { contract: { type: 'string' }, filter: { type: 'string' }, none: { type: 'boolean' } } });
  const ref = required(values, 'contract');
  if (values.none === (values.filter !== undefined)) throw usage('give exactly one of --filter <id> and --none');
  return withDb(config, async (db) => {
    const contract = await contractOf(db, ref);
    if (values.filter !== undefined) {
      const owner = await filterOwner(db, values.filter);
      if (owner === undefined) throw notFoundError(`No filter set or chain ${values.filter}.`, '--filter', values.filter);
      if (owner !== contract.id) throw forbiddenError(`Filter ${values.filter} belongs to another contract.`, '--filter');
    }
    await setContractFilter(db, contract.id, values.filter ?? null, BY);
    return presentRecord((await findContract(db, contract.id))!);
  });
}

/** `admin collection create`: a collection of the contract, with the API's defaults (`DEFAULT_DEDUPE`); a name the contract has is a conflict. */
async function collectionCreate(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { contract: { type: 'string' }, name: { type: 'string' }, type: { type: 'string' }, dedupe: { type: 'string' } } });
  const [ref, name, type, dedupe] = [required(values, 'contract'), required(values, 'name'), values.type ?? 'realtime', values.dedupe ?? DEFAULT_DEDUPE];
  if (!(COLLECTION_TYPES as readonly string[]).includes(type)) {
    throw validationError([{ propertyName: '--type', message: `--type must be one of ${COLLECTION_TYPES.join(', ')}`, propertyValue: type, code: VALIDATION_CODES.enum }]);
  }
  if (!(DEDUPE_MODES as readonly string[]).includes(dedupe)) {
    throw validationError([{ propertyName: '--dedupe', message: `--dedupe must be one of ${DEDUPE_MODES.join(', ')}`, propertyValue: dedupe, code: VALIDATION_CODES.enum }]);
  }
  return withDb(config, async (db) => {
    const contract = await contractOf(db, ref);
    if (await nameTaken(db, 'collections', contract.id, name)) throw conflictError(`A collection named ${name} already exists in contract ${contract.slug}.`, '--name', name);
    return presentRecord(await createCollection(db, contract.id, { name, type, dedupe }, BY));
  });
}

/** The options of `admin client create`, checked: scopes (default all), redirect URIs (RFC 6749 §3.1.2), public or not, e-mail address. */
function clientOptions(args: string[]): { name: string; scopes: Scope[]; redirectUris: string[]; isPublic: boolean; email: string | null } {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, email: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, public: { type: 'boolean' }, scope: { type: 'string' } },
  });
  const name = required(values, 'name');
  const requested = values.scope === undefined ? undefined : parseScope(values.scope);
  if (requested?.unknown.length || requested?.scopes.length === 0) {
    throw validationError([{ propertyName: '--scope', message: `--scope must name one or more of ${SCOPES.join(', ')}, space-separated`, propertyValue: values.scope, code: VALIDATION_CODES.enum }]);
  }
  const redirectUris = values['redirect-uri'] ?? [];
  for (const uri of redirectUris) {
    if (!URL.canParse(uri) || new URL(uri).hash) {
      throw validationError([{ propertyName: '--redirect-uri', message: 'a redirect URI must be absolute, without fragment (RFC 6749 §3.1.2)', propertyValue: uri, code: VALIDATION_CODES.format }]);
    }
  }
  if (values.public && redirectUris.length === 0) {
    throw validationError([{ propertyName: '--redirect-uri', message: 'a public client needs at least one --redirect-uri (it can only use the browser flows)', code: VALIDATION_CODES.required }]);
  }
  const email = values.email ?? null;
  if (email !== null && !EMAIL.test(email)) {
    throw validationError([{ propertyName: '--email', message: '--email must be an e-mail address (local@domain)', propertyValue: email, code: VALIDATION_CODES.format }]);
  }
  return { name, scopes: requested?.scopes ?? [...SCOPES], redirectUris, isPublic: values.public === true, email };
}

/**
 * `admin client create`: a machine client; confidential (its secret printed once, stored hashed)
 * unless `--public`. Without `--email` its address is `<consumer id>@clients.sluice.invalid`
 * (docs/api.md#consumer-details); `--scope`: the scopes its tokens may carry (docs/api.md#roles-and-scopes).
 */
async function clientCreate(args: string[], config: Config): Promise<unknown> {
  const { name, scopes, redirectUris, isPublic, email } = clientOptions(args);
  const clientId = randomToken().slice(0, 24);
  const clientSecret = isPublic ? undefined : randomToken();
  return withDb(config, async (db) => {
    if (email !== null && (await emailTaken(db, email))) throw conflictError(`A consumer with the e-mail address ${email} already exists.`, '--email', email);
    const consumer = await createConsumer(db, {
      type: 'client',
      name,
      email,
      language: null,
      username: null,
      passwordHash: null,
      clientId,
      secretHash: clientSecret ? await hashSecret(clientSecret) : null,
      redirectUris,
      scopes,
    });
    return {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret } : {}),
      consumer_id: consumer.id,
      name,
      email: consumer.email,
      redirect_uris: redirectUris,
      scope: consumer.scopes,
    };
  });
}

/** `admin user create`: a user who signs in with a password (from SLUICE_PASSWORD or standard input). */
async function userCreate(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' }, username: { type: 'string' }, email: { type: 'string' }, language: { type: 'string' } } });
  const [name, username, email] = [required(values, 'name'), required(values, 'username'), required(values, 'email')];
  const language = values.language?.toLowerCase() ?? null;
  if (language !== null && !/^[a-z]{2}$/.test(language)) {
    throw validationError([{ propertyName: '--language', message: '--language must be an ISO 639-1 code', propertyValue: language, code: VALIDATION_CODES.format }]);
  }
  const password = await newPassword();
  return withDb(config, async (db) => {
    const consumer = await createConsumer(db, { type: 'user', name, email, language, username, passwordHash: await hashSecret(password), clientId: null, secretHash: null });
    return { consumer_id: consumer.id, name, username, email, ...(language ? { language } : {}) };
  });
}

/** `admin user set-password`: a new password (SLUICE_PASSWORD or standard input) locks out whoever knew the old one: the user's sessions end and tokens are revoked. */
async function userSetPassword(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { username: { type: 'string' } } });
  const username = required(values, 'username');
  const password = await newPassword();
  return withDb(config, async (db) => {
    const user = await findConsumerByRef(db, username);
    if (!user || user.type !== 'user') throw notFoundError(`No user ${username}.`, '--username', username);
    const ended = await setPasswordHash(db, user.id, await hashSecret(password));
    return { consumer_id: user.id, username: user.username, password_set: true, sessions_ended: ended.sessions, tokens_revoked: ended.tokens };
  });
}

/** `admin client disable`: the consumer's tokens and sessions stop working at once. */
async function clientDisable(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { client: { type: 'string' } } });
  const ref = required(values, 'client');
  return withDb(config, async (db) => {
    const consumer = await findConsumerByRef(db, ref);
    if (!consumer) throw notFoundError(`No client ${ref}.`, '--client', ref);
    const changed = await disableConsumer(db, consumer.id);
    return { consumer_id: consumer.id, ...(consumer.clientId ? { client_id: consumer.clientId } : {}), disabled: true, was_enabled: changed };
  });
}

/** `admin grant`: the consumer gets the contract in `--role` (default owner; granting again changes the role; docs/api.md#roles-and-scopes), recorded in the contract's audit trail. */
async function grantCommand(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { consumer: { type: 'string' }, contract: { type: 'string' }, role: { type: 'string' } } });
  const [consumerRef, contractRef] = [required(values, 'consumer'), required(values, 'contract')];
  const role = values.role ?? 'owner';
  if (!isGrantRole(role)) {
    throw validationError([{ propertyName: '--role', message: `--role must be one of ${[...GRANT_ROLES].reverse().join(', ')}`, propertyValue: role, code: VALIDATION_CODES.enum }]);
  }
  return withDb(config, async (db) => {
    const [consumer, contract] = [await consumerOf(db, consumerRef), await contractOf(db, contractRef)];
    const change = await grant(db, consumer.id, contract.id, OPERATOR, role);
    return { consumer_id: consumer.id, contract_id: contract.id, contract: contract.slug, granted: true, role, change };
  });
}

/** `admin revoke`: the consumer loses the contract. */
async function revokeCommand(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { consumer: { type: 'string' }, contract: { type: 'string' } } });
  const [consumerRef, contractRef] = [required(values, 'consumer'), required(values, 'contract')];
  return withDb(config, async (db) => {
    const [consumer, contract] = [await consumerOf(db, consumerRef), await contractOf(db, contractRef)];
    return { consumer_id: consumer.id, contract_id: contract.id, contract: contract.slug, revoked: await revokeGrant(db, consumer.id, contract.id, OPERATOR) };
  });
}

/**
 * `admin rotate-key`: re-encrypts every stored service credential with SLUICE_NEW_SECRET_KEY, or
 * with a new random key written to the key file (docs/operations.md#the-secret-key).
 */
async function rotateKey(_args: string[], config: Config): Promise<unknown> {
  if (config.secretKey && !config.newSecretKey) {
    throw validationError([{ propertyName: 'SLUICE_NEW_SECRET_KEY', message: 'SLUICE_SECRET_KEY is set: give the new key in SLUICE_NEW_SECRET_KEY (then set SLUICE_SECRET_KEY to it)', code: VALIDATION_CODES.required }]);
  }
  return withDb(config, async (db) => {
    const from = await checkSecretKey(db, config);
    const to = config.newSecretKey ? parseSecretKey(config.newSecretKey) : generateSecretKey();
    // The new key is on disk before the database uses it (secret.key.new), and becomes the key
    // file only after the transaction committed: no moment when the stored credentials' key is nowhere.
    const pending = config.secretKey ? undefined : writeKeyFile(config.dataDir, to, `${KEY_FILE}.new`);
    let counts: { reencrypted: number; unchanged: number };
    try {
      counts = await resealCredentials(db, from, to);
    } catch (error) {
      if (pending) rmSync(pending, { force: true });
      throw error;
    }
    const keyFile = pending ? keyFilePath(config.dataDir) : undefined;
    if (pending && keyFile) renameSync(pending, keyFile);
    forgetKeyFiles();
    return {
      reencrypted: counts.reencrypted,
      unchanged: counts.unchanged,
      old_key_id: from.id,
      new_key_id: to.id,
      ...(keyFile ? { key_file: keyFile } : { next: 'set SLUICE_SECRET_KEY to the new key' }),
      restart: 'restart every Sluice process so that it reads the new key',
    };
  });
}

/** The `admin` commands, by the words after `admin` (one or two). */
const ADMIN: Record<string, Command> = {
  'contract create': { usage: 'admin contract create --name <name>', run: contractCreate },
  'contract set-filter': { usage: 'admin contract set-filter --contract <id|slug> (--filter <set or chain id> | --none)', run: contractSetFilter },
  'collection create': { usage: 'admin collection create --contract <id|slug> --name <name> [--type realtime|ranked] [--dedupe off|url|url+text]', run: collectionCreate },
  'client create': { usage: 'admin client create --name <name> [--email <e>] [--redirect-uri <uri> ...] [--public] [--scope "<scopes>"]', run: clientCreate },
  'client disable': { usage: 'admin client disable --client <client id|consumer id>', run: clientDisable },
  'user create': { usage: 'admin user create --name <name> --username <u> --email <e> [--language <iso>]', run: userCreate },
  'user set-password': { usage: 'admin user set-password --username <u>', run: userSetPassword },
  grant: { usage: 'admin grant --consumer <consumer id|username|client id> --contract <id|slug> [--role <role>]', run: grantCommand },
  revoke: { usage: 'admin revoke --consumer <consumer id|username|client id> --contract <id|slug>', run: revokeCommand },
  'rotate-key': { usage: 'admin rotate-key', run: rotateKey },
};

/** `admin …`: the command named by the next two words, else by the next one. */
async function admin(args: string[], config: Config): Promise<unknown> {
  const [first, second, ...more] = args;
  const key = second && Object.hasOwn(ADMIN, `${first} ${second}`) ? `${first} ${second}` : (first ?? '');
  // Own entries only: `admin toString` is no command.
  const command = Object.hasOwn(ADMIN, key) ? ADMIN[key] : undefined;
  if (!command) throw usage(`unknown admin command "${args.join(' ')}"; see README "CLI"`);
  return command.run(key.includes(' ') ? more : [second, ...more].filter((a): a is string => a !== undefined), config);
}

/** A progress bar on standard error when it is a terminal (cli-progress), else nothing. */
function progressBar(label: string): { update: Progress; stop(): void } {
  if (!process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% {value}/{total}`, stream: process.stderr, hideCursor: true, etaBuffer: 50 }, Presets.shades_classic);
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(Math.max(total, done, 1), done);
        started = true;
        return;
      }
      if (total) bar.setTotal(total);
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}

/** Writes `line` to `out`, waiting while its buffer is full. */
async function writeTo(out: Writable, line: string): Promise<void> {
  if (!out.write(line)) await once(out, 'drain');
}

/** `backup`: a consistent copy of the SQLite database while the service runs (docs/operations.md#backup-and-restore). */
async function backup(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
  const to = resolve(required(values, 'to'));
  const bar = progressBar('backup (pages)');
  try {
    return await backupSqlite(config.databaseUrl, to, bar.update);
  } finally {
    bar.stop();
  }
}

/** `restore`: replaces the SQLite database with a backup (docs/operations.md#backup-and-restore). */
async function restore(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' }, force: { type: 'boolean' } } });
  const from = resolve(required(values, 'from'));
  const bar = progressBar('restore (pages)');
  try {
    return { ...(await restoreSqlite(config.databaseUrl, from, values.force === true, bar.update)), next: 'start the service; run `sluice migrate` first if it says the schema is older' };
  } finally {
    bar.stop();
  }
}

/** `export`: one contract's data as JSON Lines to `--to` (written whole or not at all), or to standard output (docs/operations.md#export-and-import). */
async function exportCommand(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { contract: { type: 'string' }, to: { type: 'string' } } });
  const ref = required(values, 'contract');
  const to = values.to === undefined ? undefined : resolve(required(values, 'to'));
  if (to && existsSync(to)) throw conflictError(`${to} exists; give another file.`, '--to', to);
  return withDb(config, async (db) => {
    const out: Writable = to ? createWriteStream(`${to}.partial`) : process.stdout;
    const bar = progressBar('export (rows)');
    try {
      const rows = await exportContract(db, ref, (line) => writeTo(out, line), bar.update);
      if (!to) return undefined;
      out.end();
      await once(out, 'finish');
      renameSync(`${to}.partial`, to);
      return { file: to, rows };
    } catch (error) {
      if (to) {
        out.destroy();
        rmSync(`${to}.partial`, { force: true });
      }
      throw error;
    } finally {
      bar.stop();
    }
  });
}

/** `import`: an export into this installation, ids kept; its credentials sealed with SLUICE_SOURCE_SECRET_KEY are sealed again with this one's key (docs/operations.md#export-and-import). */
async function importCommand(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' } } });
  const from = resolve(required(values, 'from'));
  if (!existsSync(from)) throw validationError([{ propertyName: '--from', message: `no file ${from}`, propertyValue: from, code: VALIDATION_CODES.required }]);
  const sourceKey = process.env.SLUICE_SOURCE_SECRET_KEY;
  let source: ReturnType<typeof parseSecretKey> | undefined;
  try {
    source = sourceKey ? parseSecretKey(sourceKey) : undefined;
  } catch (error) {
    throw validationError([{ propertyName: 'SLUICE_SOURCE_SECRET_KEY', message: (error as Error).message, code: VALIDATION_CODES.format }]);
  }
  return withDb(config, async (db) => {
    const target = await checkSecretKey(db, config);
    const size = statSync(from).size;
    const bar = progressBar('import (bytes)');
    const input = createReadStream(from);
    try {
      return { file: from, ...(await importContract(db, input, { target, ...(source ? { source } : {}) }, () => bar.update(input.bytesRead, size))) };
    } finally {
      input.destroy();
      bar.stop();
    }
  });
}

function errorObject(error: unknown): { errors: object[] } {
  if (error instanceof ApiError) return { errors: error.entries };
  if (error instanceof ConfigError) return { errors: [{ name: 'ConfigError', message: error.message, propertyName: error.variable, code: 1000 }] };
  if (isUniqueViolation(error)) {
    return { errors: [{ name: 'ConflictError', message: 'A record with that name, username, e-mail or id already exists.', code: 4091 }] };
  }
  if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    return { errors: [{ name: 'ValidationError', message: error.message, propertyName: 'command', code: 1002 }] };
  }
  return { errors: [{ name: 'InternalError', message: error instanceof Error ? error.message : String(error), code: 5001 }] };
}

/** The greeting's facts: the demo user's name and credentials file, when that file exists. */
function greetingFacts(summary: Server['summary'], config: Config): GreetingFacts {
  const path = summary.credentials ?? resolve(join(config.dataDir, 'credentials.json'));
  try {
    const username = (JSON.parse(readFileSync(path, 'utf8')) as { user?: { username?: string } }).user?.username;
    return { role: summary.role, url: summary.url, ...(username ? { credentials: path, username } : {}) };
  } catch {
    return { role: summary.role, url: summary.url };
  }
}

/** `serve`: runs the service in `--role` until SIGTERM or SIGINT; a greeting and readable logs at a terminal, JSON otherwise. */
async function serveUntilSignal(args: string[], config: Config): Promise<unknown> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
  if (!(ROLES as readonly string[]).includes(values.role)) {
    throw validationError([{ propertyName: '--role', message: `--role must be one of ${ROLES.join(', ')}`, propertyValue: values.role, code: VALIDATION_CODES.enum }]);
  }
  // A person at a terminal (`npm start`) gets a greeting and readable logs; a program, JSON.
  const terminal = process.stdout.isTTY === true;
  const server = await serve(config, values.role as Role, { prettyLogs: terminal });
  process.stdout.write(terminal ? greeting(greetingFacts(server.summary, config), config) : `${JSON.stringify(server.summary)}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => void server.close().then(resolve);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return undefined;
}

/** `migrate`: applies the migrations the database lacks (docs/operations.md#migrations). */
async function migrate(_args: string[], config: Config): Promise<unknown> {
  const db = openDb(config.databaseUrl);
  try {
    const migrated = await migrateToLatest(db);
    return { migrated, state: (await schemaState(db)).state };
  } finally {
    await db.destroy();
  }
}

/** `config`: the configuration, secrets masked, with the console's built-in OAuth client (first-party.ts) and its redirect URI as resolved from API_URL. */
async function showConfig(_args: string[], config: Config): Promise<unknown> {
  return { ...maskedConfig(config), console: { url: consoleUrl(config), client_id: CONSOLE_CLIENT_ID, redirect_uri: consoleUrl(config), public: true } };
}

/** The commands, in the order the unknown-command error lists them. */
export const COMMANDS: Record<string, Command> = {
  serve: { usage: 'serve [--role all|auth|api|queue|collector]', run: serveUntilSignal },
  migrate: { usage: 'migrate', run: migrate },
  config: { usage: 'config', run: showConfig },
  admin: { usage: 'admin <command> …', run: admin },
  backup: { usage: 'backup --to <file>', run: backup },
  restore: { usage: 'restore --from <file> [--force]', run: restore },
  export: { usage: 'export --contract <id|slug> [--to <file>]', run: exportCommand },
  import: { usage: 'import --from <file>', run: importCommand },
};

/** Every synopsis, `admin`'s commands in place of `admin <command> …`: what docs/operations.md#cli lists. */
export function synopses(): string[] {
  return Object.entries(COMMANDS).flatMap(([name, command]) => (name === 'admin' ? Object.values(ADMIN).map((each) => each.usage) : [command.usage]));
}

/** Runs one command line (without the program name); resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  try {
    if (existsSync('.env')) process.loadEnvFile('.env');
    const config = loadConfig(process.env);
    const [name, ...rest] = argv;
    const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!command) throw usage(`unknown command "${name ?? ''}"; commands: ${Object.keys(COMMANDS).join(', ')}`);
    const result = await command.run(rest, config);
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`${JSON.stringify(errorObject(error), null, 2)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
