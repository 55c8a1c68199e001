/**
 * The media proxy over HTTP (docs/api.md#media-proxy, issue 34 point 5): a real image server on
 * 127.0.0.1 serving images made with sharp; the wall's http picture served from Sluice's https
 * origin, resized; private addresses, non-images and a decompression bomb refused; the disk cache
 * held under MEDIA_CACHE_MB; a tampered signature → 403; MEDIA_PROXY=off leaves the wall's URLs.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { mediaKey, type MediaWidth, proxiedMediaUrl } from '../../src/lib/media-url.ts';
import { currentSecretKey } from '../../src/lib/secret-box.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { type Reply, startSourceServer } from '../source-server.ts';

const QUEUE_URL = 'https://sluice.example';

/** A 1000 × 750 PNG of one colour. */
const photo = await sharp({ create: { width: 1000, height: 750, channels: 3, background: '#e11d48' } }).png().toBuffer();
/** A 900 × 900 PNG of noise: about 230 KB once resized to 640 and encoded as WebP. */
const noise = () => sharp(randomBytes(900 * 900 * 3), { raw: { width: 900, height: 900, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();

/** A PNG chunk: length, type, data, CRC-32 of type and data (PNG spec §5.3). */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A decompression bomb: a PNG of a few hundred bytes declaring 50 000 × 50 000 RGB pixels (7.5 GB decoded). */
function bombPng(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(50_000, 0);
  header.writeUInt32BE(50_000, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = deflateSync(Buffer.alloc(64 * (1 + 50_000 * 3)), { level: 9 }); // the first rows, all zero
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', header), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

async function setup(env: Record<string, string> = {}, serve: (path: string) => Reply = () => ({ status: 404 })) {
  const source = await startSourceServer((req) => serve(req.parsed.pathname));
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', QUEUE_URL, ...env });
  const key = mediaKey(currentSecretKey(ctx.config));
  /** The path (below the queue origin) of `url` through the proxy. */
  const signed = (url: string, width?: MediaWidth) => proxiedMediaUrl(QUEUE_URL, key, url, width).slice(QUEUE_URL.length);
  const get = (path: string, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url: path, headers });
  return { ...ctx, source, signed, get, close: () => source.close() };
}

const image = (body: Buffer): Reply => ({ headers: { 'content-type': 'image/png' }, body });

describe('GET /v1/media/{signature}/{url}', () => {
  it("serves the wall's http picture from the https queue origin, resized to the card's width, cached with an ETag", async () => {
    const t = await setup({}, (path) => (path === '/photo.png' ? image(photo) : { status: 404 }));
    const tenant = await buildTenant(t.db);
    const source = `${t.source.base}/photo.png`;
    expect(source).toMatch(/^http:\/\/127\.0\.0\.1:/);
    await seedItems(t.db, tenant, [buildItem({ id: 'rss_photo', type: 'image', media: [{ type: 'image', url: source, width: 1000, height: 750 }] })]);
    const wall = await t.get(`/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}`);
    expect(wall.statusCode, wall.body).toBe(200);
    const src = /<img src="([^"]+)"/.exec(wall.body)?.[1]?.replaceAll('&amp;', '&');
    // Root-relative: the page is a document of the queue origin (docs/api.md#media-proxy).
    expect(src).toBe(proxiedMediaUrl('', mediaKey(currentSecretKey(t.config)), source, 640));
    expect(src).toMatch(/^\/v1\/media\/[A-Za-z0-9_-]{22}\/[A-Za-z0-9_-]+\?w=640$/);
    expect(wall.body).not.toContain(source);

    const res = await t.get(src!);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const meta = await sharp(res.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 640, 480]);
    // The second read comes from the disk cache; a revalidation with the ETag is a 304.
    const again = await t.get(src!);
    expect(again.rawPayload.equals(res.rawPayload)).toBe(true);
    expect(t.source.requests).toHaveLength(1);
    const revalidated = await t.get(src!, { 'if-none-match': String(res.headers.etag) });
    expect(revalidated.statusCode).toBe(304);
    // Without a width: the original size, re-encoded.
    const original = await t.get(t.signed(source));
    expect((await sharp(original.rawPayload).metadata()).width).toBe(1000);
    await t.close();
  });

  it('refuses a tampered or foreign signature with 403, an unknown width with 400', async () => {
    const t = await setup({}, () => image(photo));
    const source = `${t.source.base}/photo.png`;
    const good = t.signed(source, 640);
    const [, , , signature, encoded] = good.split(/[/?]/);
    const flipped = `${signature!.slice(0, -1)}${signature!.endsWith('A') ? 'B' : 'A'}`;
    const other = Buffer.from(`${t.source.base}/other.png`).toString('base64url');
    for (const path of [
      `/v1/media/${flipped}/${encoded}?w=640`, // one character of the signature changed
      `/v1/media/${signature}/${other}?w=640`, // the signature of another URL
      `/v1/media/${signature}/${encoded}?w=1280`, // another width
      `/v1/media/${signature}/${encoded}`, // no width
      `/v1/media/${signature}/not*base64?w=640`,
    ]) {
      expectError(await t.get(path), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'signature' });
    }
    expectError(await t.get(`/v1/media/${signature}/${encoded}?w=123`), 400, { name: 'ValidationError', code: 1004, propertyName: 'w' });
    expect(t.source.requests).toHaveLength(0);
    expect((await t.get(good)).statusCode).toBe(200);
    await t.close();
  });

  it('refuses private addresses in any form when private fetches are off (the guard of the collector)', async () => {
    const t = await setup({ ALLOW_PRIVATE_FETCH: 'false' }, () => image(photo));
    const port = new URL(t.source.base).port;
    for (const url of [`http://127.0.0.1:${port}/photo.png`, `http://[::1]:${port}/photo.png`, `http://0x7f.1:${port}/photo.png`, `http://[::ffff:127.0.0.1]:${port}/photo.png`, `http://localhost:${port}/photo.png`]) {
      expectError(await t.get(t.signed(url, 640)), 422, { name: 'UnprocessableError', code: 4221, propertyName: 'url' });
    }
    expect(t.source.requests).toHaveLength(0);
    await t.close();
  });

  it('refuses what is not an image whatever its Content-Type, and a decompression bomb', async () => {
    const bomb = bombPng();
    expect(bomb.length).toBeLessThan(20_000);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="file:///etc/passwd"/></svg>';
    const t = await setup({}, (path) =>
      path === '/page.jpg' ? { headers: { 'content-type': 'image/jpeg' }, body: '<!doctype html><p>not a picture</p>' }
      : path === '/bomb.png' ? image(bomb)
      : path === '/drawing.svg' ? { headers: { 'content-type': 'image/svg+xml' }, body: svg }
      : path === '/truncated.png' ? image(photo.subarray(0, 200))
      : { status: 404 },
    );
    for (const name of ['page.jpg', 'bomb.png', 'drawing.svg', 'truncated.png']) {
      const res = await t.get(t.signed(`${t.source.base}/${name}`, 640));
      expectError(res, 422, { name: 'UnprocessableError', code: 4221, propertyName: 'url' });
      expect(res.headers['cache-control'], name).toBe('no-store');
      // The bomb is refused for its size (sharp's limitInputPixels), not for its missing rows.
      if (name === 'bomb.png') expect(res.json().errors[0].message).toContain('more than the 50000000 pixels');
    }
    expectError(await t.get(t.signed(`${t.source.base}/missing.png`, 640)), 502, { name: 'UpstreamError', code: 5021, propertyName: 'url' });
    await t.close();
  });

  it('keeps the disk cache under MEDIA_CACHE_MB, the least recently used evicted', async () => {
    const images = new Map<string, Buffer>();
    for (let n = 0; n < 7; n++) images.set(`/noise-${n}.png`, await noise());
    const t = await setup({ MEDIA_CACHE_MB: '1' }, (path) => (images.has(path) ? image(images.get(path)!) : { status: 404 }));
    const dir = join(t.dir, 'media-cache');
    const held = () => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    let served = 0;
    for (const path of images.keys()) {
      const res = await t.get(t.signed(`${t.source.base}${path}`, 640));
      expect(res.statusCode, res.body).toBe(200);
      served += res.rawPayload.length;
      expect(held()).toBeLessThanOrEqual(1024 * 1024);
    }
    expect(served).toBeGreaterThan(1024 * 1024); // more than the bound went through
    expect(readdirSync(dir).length).toBeGreaterThan(0);
    // The newest is still cached, the oldest was evicted and is fetched again.
    await t.get(t.signed(`${t.source.base}/noise-6.png`, 640));
    await t.get(t.signed(`${t.source.base}/noise-0.png`, 640));
    expect(t.source.requests.map((r) => r.url)).toEqual([...images.keys(), '/noise-0.png']);
    await t.close();
  });

  it('MEDIA_PROXY=off: the wall keeps the collected https URL and drops an http one, as before', async () => {
    const t = await setup({ MEDIA_PROXY: 'off' });
    const tenant = await buildTenant(t.db);
    await seedItems(t.db, tenant, [
      buildItem({ id: 'rss_https', type: 'image', media: [{ type: 'image', url: 'https://images.example/a.png', width: 800, height: 600 }] }),
      buildItem({ id: 'rss_http', type: 'image', date: new Date(Date.now() - 60_000).toISOString(), media: [{ type: 'image', url: 'http://images.example/b.png', width: 800, height: 600 }] }),
    ]);
    const wall = await t.get(`/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}`);
    const sources = [...wall.body.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]);
    expect(sources).toEqual(['https://images.example/a.png']);
    expect(wall.body).not.toContain('/v1/media/');
    await t.close();
  });

  it("MEDIA_PROXY=api: the content read's image URLs are the proxy's, and they answer", async () => {
    const t = await setup({ MEDIA_PROXY: 'api' }, (path) => (path === '/photo.png' ? image(photo) : { status: 404 }));
    const tenant = await buildTenant(t.db);
    const source = `${t.source.base}/photo.png`;
    await seedItems(t.db, tenant, [buildItem({ id: 'rss_photo', type: 'image', media: [{ type: 'image', url: source, width: 1000, height: 750 }] })]);
    const res = await t.get(`/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}`);
    expect(res.statusCode, res.body).toBe(200);
    const [item] = res.json() as { media: { type: string; url: string }[] }[];
    expect(item!.media[0]!.url).toBe(proxiedMediaUrl(QUEUE_URL, mediaKey(currentSecretKey(t.config)), source));
    const image2 = await t.get(item!.media[0]!.url.slice(QUEUE_URL.length));
    expect([image2.statusCode, image2.headers['content-type']]).toEqual([200, 'image/webp']);
    // With the default (wall), the content API gives the URL as collected.
    const plain = await setup();
    const other = await buildTenant(plain.db);
    await seedItems(plain.db, other, [buildItem({ id: 'rss_photo', type: 'image', media: [{ type: 'image', url: source, width: 1000, height: 750 }] })]);
    const read = (await plain.get(`/v1/content/${other.contract.slug}?q=${other.collection.slug}`)).json() as { media: { url: string }[] }[];
    expect(read[0]!.media[0]!.url).toBe(source);
    await Promise.all([t.close(), plain.close()]);
  });
});
