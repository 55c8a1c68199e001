/**
 * First start (docs/operations.md#first-start): `serve` on an empty database creates the demo and
 * writes its credentials, mode 0600, which work at once; it never does so twice, nor when turned
 * off.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/server.ts';
import { freshDatabaseEnv, tempDir } from './helper.ts';

describe('first start', () => {
  it('bootstraps the demo once, with working credentials written only to a private file', async () => {
    const dir = tempDir();
    const config = loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', ...(await freshDatabaseEnv()) });
    const server = await serve(config, 'all');
    try {
      const path = join(dir, 'credentials.json');
      expect(server.summary.credentials).toBe(path);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const credentials = JSON.parse(readFileSync(path, 'utf8'));
      expect(JSON.stringify(server.summary)).not.toContain(credentials.client.client_secret);

      const basic = Buffer.from(`${credentials.client.client_id}:${credentials.client.client_secret}`).toString('base64');
      const token = await server.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: `Basic ${basic}` }, payload: { grant_type: 'client_credentials' } });
      expect(token.statusCode).toBe(200);
      const accessToken = token.json().access_token;
      const queue = await server.app.inject(`/v1/queue/demo?q=news&access_token=${accessToken}`);
      expect(queue.statusCode).toBe(200);
      expect(queue.json()).toEqual([]);
      const collections = await server.app.inject('/v1/collections/demo');
      expect(collections.json()).toEqual([{ name: 'news', type: 'realtime', url: 'http://localhost:0/v1/content/demo?q=news' }]);
    } finally {
      await server.close();
    }

    const again = await serve(config, 'all');
    await again.close();
    expect(again.summary.credentials).toBeUndefined();
  });

  it('creates nothing with SLUICE_BOOTSTRAP=false', async () => {
    const dir = tempDir();
    const server = await serve(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...(await freshDatabaseEnv()) }), 'all');
    try {
      expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
      expect((await server.app.inject('/v1/collections/demo')).statusCode).toBe(401);
      expect((await server.app.inject('/readyz')).json()).toEqual({ status: 'ok' });
    } finally {
      await server.close();
    }
  });

  it('serves only its role', async () => {
    const dir = tempDir();
    const server = await serve(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', ...(await freshDatabaseEnv()) }), 'auth');
    try {
      expect(server.collector).toBeUndefined();
      expect((await server.app.inject('/v1/collections/demo')).statusCode).toBe(404);
      expect((await server.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: {} })).statusCode).toBe(400);
    } finally {
      await server.close();
    }
  });
});
