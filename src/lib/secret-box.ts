/**
 * Encryption of stored secrets (docs/operations.md#the-secret-key): AES-256-GCM through
 * node:crypto (NIST SP 800-38D), a fresh random 96-bit nonce per value, the 128-bit tag kept with
 * the ciphertext, and the id of the key beside it so that a rotation can tell old from new.
 *
 * A sealed value is the text `v1.<keyId>.<nonce>.<ciphertext+tag>` (base64url parts); `keyId` is
 * the first 16 hex characters of SHA-256 of the key, which identifies a key without revealing it.
 *
 * The key is 32 bytes: `SLUICE_SECRET_KEY` (base64 or hex), else the key file `<DATA_DIR>/secret.key`,
 * created on first use (mode 0600, written to a temporary file and renamed, so a reader never sees
 * half a key).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A 32-byte key and its id. */
export interface SecretKey {
  readonly id: string;
  readonly bytes: Buffer;
}

/** The name of the key file inside DATA_DIR. */
export const KEY_FILE = 'secret.key';

/** The key of 32 bytes given as 64 hex characters or base64 (with or without padding); throws Error saying why not. */
export function parseSecretKey(text: string): SecretKey {
  const raw = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
  if (bytes.length !== 32) throw new Error('must be 32 bytes written as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)');
  return keyOf(bytes);
}

/** The key of these 32 bytes. */
export function keyOf(bytes: Buffer): SecretKey {
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 16), bytes };
}

/** A new random key. */
export function generateSecretKey(): SecretKey {
  return keyOf(randomBytes(32));
}

/** The key as written to the key file and accepted by SLUICE_SECRET_KEY (base64). */
export function encodeSecretKey(key: SecretKey): string {
  return key.bytes.toString('base64');
}

/** Path of the key file of `dataDir`. */
export function keyFilePath(dataDir: string): string {
  return join(dataDir, KEY_FILE);
}

/** The key in `dataDir`'s key file, or undefined when there is none; throws Error for a malformed file. */
export function readKeyFile(dataDir: string): SecretKey | undefined {
  const path = keyFilePath(dataDir);
  if (!existsSync(path)) return undefined;
  try {
    return parseSecretKey(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
}

/**
 * Writes `key` as `dataDir`'s key file (or as `name` beside it), readable only by its owner
 * (0600), atomically (temporary file, then rename); returns its path. A missing `dataDir` is
 * created first, readable only by its owner (0700): with `DATABASE_URL` naming PostgreSQL nothing
 * else creates it (docs/operations.md#the-secret-key).
 */
export function writeKeyFile(dataDir: string, key: SecretKey, name = KEY_FILE): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, name);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${encodeSecretKey(key)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600); // whatever the umask
  renameSync(temporary, path);
  return path;
}

const VERSION = 'v1';

/** Encrypts `plaintext` (UTF-8) with `key`: `v1.<keyId>.<nonce>.<ciphertext+tag>`. */
export function seal(key: SecretKey, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, nonce);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return [VERSION, key.id, nonce.toString('base64url'), body.toString('base64url')].join('.');
}

/** The id of the key that sealed `sealed`, or undefined when it is not a sealed value. */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split('.');
  return parts.length === 4 && parts[0] === VERSION ? parts[1] : undefined;
}

/** Decrypts a value of `seal`; throws Error when another key sealed it or it was altered. */
export function open(key: SecretKey, sealed: string): string {
  const [version, keyId, nonce, body] = sealed.split('.');
  if (version !== VERSION || !nonce || !body) throw new Error('not a sealed value');
  if (keyId !== key.id) throw new Error(`sealed with key ${keyId}, not with the current key ${key.id}`);
  const bytes = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(nonce, 'base64url'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
}

const loaded = new Map<string, SecretKey>();

/**
 * The key in use: `secretKey` (SLUICE_SECRET_KEY, already validated by the configuration), else the
 * key file of `dataDir`, read once per process; `create` (default true) writes a new key file when
 * there is none. Throws Error for a malformed key file, or none when `create` is false.
 */
export function currentSecretKey(settings: { secretKey: string | undefined; dataDir: string }, create = true): SecretKey {
  if (settings.secretKey) return parseSecretKey(settings.secretKey);
  const cached = loaded.get(settings.dataDir);
  if (cached) return cached;
  let key = readKeyFile(settings.dataDir);
  if (!key) {
    if (!create) throw new Error(`no SLUICE_SECRET_KEY and no key file ${keyFilePath(settings.dataDir)}`);
    key = generateSecretKey();
    writeKeyFile(settings.dataDir, key);
  }
  loaded.set(settings.dataDir, key);
  return key;
}

/** Forgets the key files read so far (after `sluice admin rotate-key` wrote a new one). */
export function forgetKeyFiles(): void {
  loaded.clear();
}
