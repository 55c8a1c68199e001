import { describe, expect, it } from 'vitest';
import { decodeMediaUrl, encodeMediaUrl, MAX_MEDIA_SEGMENT, mediaKey, mediaSignature, proxiedMediaUrl, verifyMediaSignature } from './media-url.ts';
import { keyOf } from './secret-box.ts';

const key = mediaKey(keyOf(Buffer.alloc(32, 7)));
const url = 'http://images.example/a b.png?x=1';

describe('media proxy URLs', () => {
  it('derive a key of their own from the secret key (HKDF), stable and distinct from it', () => {
    expect(key).toHaveLength(32);
    expect(key.equals(Buffer.alloc(32, 7))).toBe(false);
    expect(mediaKey(keyOf(Buffer.alloc(32, 7))).equals(key)).toBe(true);
    expect(mediaKey(keyOf(Buffer.alloc(32, 8))).equals(key)).toBe(false);
  });

  it.each([
    ['the same URL and width', url, 640, true],
    ['another width', url, 320, false],
    ['no width', url, undefined, false],
    ['another URL', `${url}&y=2`, 640, false],
  ] as const)('verify %s: %s', (_name, other, width, ok) => {
    expect(verifyMediaSignature(key, mediaSignature(key, url, 640), other, width)).toBe(ok);
  });

  it('refuse a signature of another length or key', () => {
    const signature = mediaSignature(key, url);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(verifyMediaSignature(key, signature.slice(1), url)).toBe(false);
    expect(verifyMediaSignature(mediaKey(keyOf(Buffer.alloc(32, 8))), signature, url)).toBe(false);
  });

  it('encode the URL in base64url and back; anything else decodes to nothing', () => {
    expect(decodeMediaUrl(encodeMediaUrl(url))).toBe(url);
    expect(decodeMediaUrl('a+b/c=')).toBeUndefined();
  });

  it.each([
    ['http', url, true],
    ['https', 'https://images.example/a.png', true],
    ['data: unchanged', 'data:image/png;base64,AAAA', false],
    ['too long for a path segment: unchanged', `https://images.example/${'a'.repeat(MAX_MEDIA_SEGMENT)}`, false],
  ] as const)('proxy %s', (_name, source, proxied) => {
    const out = proxiedMediaUrl('https://sluice.example/', key, source, 640);
    expect(out === source).toBe(!proxied);
    if (proxied) expect(out).toBe(`https://sluice.example/v1/media/${mediaSignature(key, source, 640)}/${encodeMediaUrl(source)}?w=640`);
  });
});
