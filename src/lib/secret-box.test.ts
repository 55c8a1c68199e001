import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentSecretKey, encodeSecretKey, generateSecretKey, open, parseSecretKey, seal, sealedKeyId } from './secret-box.ts';

const HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

describe('secret keys', () => {
  it.each([
    ['64 hex characters', HEX, true],
    ['base64 of 32 bytes', Buffer.from(HEX, 'hex').toString('base64'), true],
    ['base64url without padding', Buffer.from(HEX, 'hex').toString('base64url'), true],
    ['surrounding white space', ` ${HEX}\n`, true],
    ['16 bytes', HEX.slice(0, 32), false],
    ['a pass phrase', 'correct horse battery staple', false],
    ['63 hex characters', HEX.slice(1), false],
    ['empty', '', false],
  ])('%s → %s', (_, text, valid) => {
    if (valid) expect(parseSecretKey(text).bytes).toEqual(Buffer.from(HEX, 'hex'));
    else expect(() => parseSecretKey(text)).toThrow(/32 bytes/);
  });

  it('creates the key file once, readable only by its owner, and reads it back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-key-'));
    const key = currentSecretKey({ secretKey: undefined, dataDir: dir });
    const path = join(dir, 'secret.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(parseSecretKey(readFileSync(path, 'utf8')).id).toBe(key.id);
    expect(currentSecretKey({ secretKey: undefined, dataDir: dir }).id).toBe(key.id);
    // SLUICE_SECRET_KEY wins over the file.
    expect(currentSecretKey({ secretKey: HEX, dataDir: dir }).id).toBe(parseSecretKey(HEX).id);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a missing DATA_DIR (0700) before its key file, as a PostgreSQL start without ./data needs', () => {
    const parent = mkdtempSync(join(tmpdir(), 'sluice-key-'));
    const dir = join(parent, 'not', 'yet');
    const key = currentSecretKey({ secretKey: undefined, dataDir: dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(parseSecretKey(readFileSync(join(dir, 'secret.key'), 'utf8')).id).toBe(key.id);
    rmSync(parent, { recursive: true, force: true });
  });
});

/** `sealed` with the first bit of its ciphertext inverted: always another, equally well-formed, value. */
function flipFirstBodyBit(sealed: string): string {
  const parts = sealed.split('.');
  const body = Buffer.from(parts[3]!, 'base64url');
  body[0] = body[0]! ^ 1;
  return [...parts.slice(0, 3), body.toString('base64url')].join('.');
}

describe('seal and open (AES-256-GCM)', () => {
  const key = generateSecretKey();
  it('round-trips, with a fresh nonce every time and the key id beside the ciphertext', () => {
    const a = seal(key, 'token-1234');
    const b = seal(key, 'token-1234');
    expect(a).not.toBe(b);
    expect(a).not.toContain('token-1234');
    expect(sealedKeyId(a)).toBe(key.id);
    expect(open(key, a)).toBe('token-1234');
  });

  it.each([
    ['another key', (sealed: string) => [sealed, generateSecretKey()] as const, /not with the current key/],
    ['the same key id over other bytes', (sealed: string) => [sealed, { id: key.id, bytes: generateSecretKey().bytes }] as const, /unable to authenticate|auth/i],
    ['an altered ciphertext', (sealed: string) => [flipFirstBodyBit(sealed), key] as const, /unable to authenticate|auth/i],
    ['not a sealed value', () => ['plain text', key] as const, /not a sealed value/],
  ])('refuses %s', (_, make, error) => {
    const [sealed, withKey] = make(seal(key, 'secret value'));
    expect(() => open(withKey, sealed)).toThrow(error);
  });

  it('writes keys as base64 that parse back to the same key', () => {
    expect(parseSecretKey(encodeSecretKey(key)).id).toBe(key.id);
  });
});
