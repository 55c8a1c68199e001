/**
 * `GET /collection/services` (docs/api.md#services): the service table as clients build inputs
 * from it: types with the fields each needs, credentials with whether they are set (names only,
 * never values), the fields of a contract's own credential; a token is required.
 */
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { SERVICE_NAMES, SERVICES } from '../../src/services/table.ts';
import { build, buildClient, buildTenant, expectError } from '../helper.ts';

const get = (app: Awaited<ReturnType<typeof build>>['app'], token?: string) =>
  app.inject({ method: 'GET', url: `/collection/services${token ? `?access_token=${encodeURIComponent(token)}` : ''}` });

describe('GET /collection/services', () => {
  it('lists every service of the table in order, with its types and the fields each type needs', async () => {
    const { app, db } = await build();
    const { token } = await buildTenant(db);
    const res = await get(app, token);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.map((entry: { service: string }) => entry.service)).toEqual(SERVICE_NAMES);
    for (const entry of body) expect(entry.types.map((t: { type: string }) => t.type)).toEqual(SERVICES[entry.service as keyof typeof SERVICES].types);
    expect(body.find((entry: { service: string }) => entry.service === 'rss')).toEqual({ service: 'rss', types: [{ type: 'feed', fields: ['input'] }], credentials: [], configured: true, credentialFields: [] });
    const twitter = body.find((entry: { service: string }) => entry.service === 'twitter');
    expect(twitter.types).toContainEqual({ type: 'location', fields: ['input', 'latitude', 'longitude', 'radius'] });
    expect(twitter.types).toContainEqual({ type: 'tag', fields: ['input'] });
    // The fields a contract sends to connect its own credential (the console's Connections form).
    expect(twitter.credentialFields).toEqual([{ name: 'bearerToken', secret: true }]);
    const byName = Object.fromEntries(body.map((entry: { service: string }) => [entry.service, entry]));
    expect(byName.instagram.credentialFields).toEqual([{ name: 'accessToken', secret: true }, { name: 'userId', secret: false }, { name: 'expiresAt', secret: false }]);
    expect(byName.bluesky.credentialFields).toEqual([{ name: 'identifier', secret: false }, { name: 'appPassword', secret: true }]);
  });

  it('says which credentials are set without sending their values', async () => {
    const secret = 'bearer-secret-value-1234';
    const { app, db } = await build({ TWITTER_BEARER_TOKEN: secret, BLUESKY_IDENTIFIER: 'mia.example.com' });
    const { token } = await buildClient(db);
    const res = await get(app, token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(secret);
    expect(res.body).not.toContain('mia.example.com');
    const byName = Object.fromEntries(res.json().map((entry: { service: string }) => [entry.service, entry]));
    expect(byName.twitter).toMatchObject({ credentials: [{ variable: 'TWITTER_BEARER_TOKEN', configured: true }], configured: true });
    expect(byName.facebook).toMatchObject({ credentials: [{ variable: 'FACEBOOK_ACCESS_TOKEN', configured: false }], configured: false });
    // Half of bluesky's pair is set: the service is not configured.
    expect(byName.bluesky).toMatchObject({
      credentials: [
        { variable: 'BLUESKY_IDENTIFIER', configured: true },
        { variable: 'BLUESKY_APP_PASSWORD', configured: false },
      ],
      configured: false,
    });
  });

  it('answers a missing, unknown or expired token with 401 and no table', async () => {
    const { app, db } = await build();
    const { consumer } = await buildClient(db);
    const entry = { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' };
    const { access_token: expired } = await issueTokens(db, consumer.id, { ttlSeconds: 60, withRefresh: false, now: Date.now() - 3600_000 });
    for (const token of [undefined, 'not-a-token', expired]) {
      const res = await get(app, token);
      expectError(res, 401, entry);
      expect(res.body).not.toContain('twitter');
    }
  });
});
