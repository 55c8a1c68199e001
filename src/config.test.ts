import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, maskedConfig } from './config.ts';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/sluice.db',
      authUrl: 'http://localhost:8080',
      apiUrl: 'http://localhost:8080',
      queueUrl: 'http://localhost:8080',
      pollInterval: 300,
      allowPrivateFetch: false,
      jetstreamUrl: 'wss://jetstream2.us-east.bsky.network/subscribe',
      jetstreamLease: 6,
      webhookTimeoutMs: 10_000,
      webhookRetryMs: 5000,
      webhookRetryWindow: 86_400,
      tokenTtl: 3600,
      sessionTtl: 28_800,
      contentMaxAge: 5,
      bootstrap: true,
      metricsToken: undefined,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite:/tmp/x.db',
      AUTH_URL: 'https://auth.example.com/',
      API_URL: 'https://api.example.com',
      QUEUE_URL: 'https://q.example.com',
      POLL_INTERVAL: '60',
      ALLOW_PRIVATE_FETCH: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_RETRY_MS: '50',
      WEBHOOK_RETRY_WINDOW: '60',
      TOKEN_TTL: '120',
      SESSION_TTL: '600',
      CONTENT_MAX_AGE: '0',
      RATE_LIMIT_CONSUMER: '0',
      RATE_LIMIT_PUBLIC: '100',
      RATE_LIMIT_WINDOW: '10',
      SLUICE_BOOTSTRAP: 'false',
      METRICS_TOKEN: 'scrape-0123456789abcdef',
      METRICS_PORT: '9464',
      METRICS_HOST: '10.0.0.5',
    });
    expect(maskedConfig(config).metricsToken).toBe('***');
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:/tmp/x.db',
      authUrl: 'https://auth.example.com',
      apiUrl: 'https://api.example.com',
      queueUrl: 'https://q.example.com',
      pollInterval: 60,
      allowPrivateFetch: true,
      webhookTimeoutMs: 1000,
      webhookConcurrency: 8,
      webhookRetryMs: 50,
      webhookRetryWindow: 60,
      tokenTtl: 120,
      sessionTtl: 600,
      contentMaxAge: 0,
      rateLimitConsumer: 0,
      rateLimitPublic: 100,
      rateLimitWindow: 10,
      bootstrap: false,
      metricsToken: 'scrape-0123456789abcdef',
      metricsPort: 9464,
      metricsHost: '10.0.0.5',
    });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://db'],
    ['AUTH_URL', 'not a url'],
    ['API_URL', 'ftp://api.example.com'],
    ['QUEUE_URL', '/relative'],
    ['POLL_INTERVAL', '0'],
    ['POLL_INTERVAL', '1.5'],
    ['ALLOW_PRIVATE_FETCH', 'maybe'],
    ['WEBHOOK_TIMEOUT_MS', '50'],
    ['WEBHOOK_CONCURRENCY', '0'],
    ['WEBHOOK_RETRY_WINDOW', '0'],
    ['TOKEN_TTL', '-1'],
    ['CONTENT_MAX_AGE', 'x'],
    ['RATE_LIMIT_CONSUMER', '-1'],
    ['RATE_LIMIT_PUBLIC', '6k'],
    ['RATE_LIMIT_WINDOW', '0'],
    ['SLUICE_BOOTSTRAP', '2'],
    ['LOG_LEVEL', 'loud'],
    ['METRICS_TOKEN', 'fifteen-chars15'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'metrics'],
    ['JETSTREAM_URL', 'https://jetstream.example.com/subscribe'],
    ['JETSTREAM_URL', 'wss://jetstream.example.com/subscribe?cursor=1'],
    ['JETSTREAM_URL', 'not a url'],
    ['JETSTREAM_LEASE', '1'],
  ])('stops on a bad %s (%s), naming it', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toContain(variable);
  });

  it('reads service base URLs, credentials and per-service poll intervals', () => {
    const config = loadConfig({ YOUTUBE_API_URL: 'http://127.0.0.1:9/yt/', YOUTUBE_API_KEY: 'k', POLL_INTERVAL_YOUTUBE: '900' });
    expect(config.services.youtube).toEqual({ apiUrl: 'http://127.0.0.1:9/yt', feedUrl: 'https://www.youtube.com/feeds/videos.xml', apiKey: 'k' });
    expect(config.services.twitter.bearerToken).toBeUndefined();
    expect(config.pollIntervals).toEqual({ youtube: 900 });
    expect(maskedConfig(config).services.youtube.apiKey).toBe('***');
    expect(() => loadConfig({ VK_API_URL: 'nope' })).toThrow(/VK_API_URL/);
  });

  it('reads JETSTREAM_URL, off turning it off', () => {
    expect(loadConfig({ JETSTREAM_URL: 'ws://127.0.0.1:6008/subscribe', JETSTREAM_LEASE: '3' })).toMatchObject({ jetstreamUrl: 'ws://127.0.0.1:6008/subscribe', jetstreamLease: 3 });
    expect(loadConfig({ JETSTREAM_URL: 'off' }).jetstreamUrl).toBeNull();
  });

  it('reads SMTP_URL with SMTP_FROM (docs/configuration.md#e-mail), masking the password; null without SMTP_URL', () => {
    expect(loadConfig({}).smtp).toBeNull();
    expect(loadConfig({ SMTP_FROM: 'sluice@example.com' }).smtp).toBeNull();
    const config = loadConfig({ SMTP_URL: 'smtps://mailer:s3cret@mail.example.com:465', SMTP_FROM: 'Sluice <sluice@example.com>', SMTP_TIMEOUT_MS: '5000' });
    expect(config.smtp).toEqual({ url: 'smtps://mailer:s3cret@mail.example.com:465', from: 'Sluice <sluice@example.com>', timeoutMs: 5000 });
    expect(maskedConfig(config).smtp!.url).toBe('smtps://mailer:***@mail.example.com:465');
    // Loopback and private hosts are allowed: the operator's own relay.
    expect(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525', SMTP_FROM: 'sluice@example.com' }).smtp).toMatchObject({ url: 'smtp://127.0.0.1:2525', timeoutMs: 10_000 });
  });

  it.each([
    [{ SMTP_URL: 'smtp://mail.example.com' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'https://mail.example.com', SMTP_FROM: 'a@example.com' }, 'SMTP_URL'],
    [{ SMTP_URL: 'not a url', SMTP_FROM: 'a@example.com' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'nobody' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'Sluice <a@example.com>\r\nBcc: x@example.com' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'a@example.com', SMTP_TIMEOUT_MS: '10' }, 'SMTP_TIMEOUT_MS'],
  ])('refuses SMTP settings %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}:`));
  });

  it('masks a database password', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://sluice:s3cret@db:5432/sluice' });
    expect(maskedConfig(config).databaseUrl).toBe('postgres://sluice:***@db:5432/sluice');
  });
});

describe('connect-flow apps', () => {
  it('reads each app, shares the Facebook app with Instagram, defaults the vendor endpoints and masks the secret', () => {
    const config = loadConfig({ FACEBOOK_CLIENT_ID: 'fb-id', FACEBOOK_CLIENT_SECRET: 'fb-secret', TWITTER_TOKEN_URL: 'http://127.0.0.1:9/token/' });
    expect(config.oauth.facebook).toEqual({ clientId: 'fb-id', clientSecret: 'fb-secret', authorizeUrl: 'https://www.facebook.com/v25.0/dialog/oauth', tokenUrl: 'https://graph.facebook.com/v25.0/oauth/access_token' });
    expect(config.oauth.instagram).toEqual(config.oauth.facebook);
    expect(config.oauth.twitter).toMatchObject({ clientId: undefined, clientSecret: undefined, authorizeUrl: 'https://x.com/i/oauth2/authorize', tokenUrl: 'http://127.0.0.1:9/token' });
    expect(maskedConfig(config).oauth.facebook.clientSecret).toBe('***');
    expect(maskedConfig(config).oauth.twitter.clientSecret).toBeUndefined();
    expect(() => loadConfig({ YOUTUBE_TOKEN_URL: 'ftp://x' })).toThrow(ConfigError);
  });
});

describe('OpenID Connect sign-in', () => {
  const full = { OIDC_ISSUER: 'https://id.example.com/', OIDC_CLIENT_ID: 'sluice', OIDC_CLIENT_SECRET: 'secret-of-sluice' };

  it('is off without OIDC_ variables, on with all three, the issuer kept exactly, the name defaulted and the secret masked', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
    const config = loadConfig(full);
    expect(config.oidc).toEqual({ issuer: 'https://id.example.com/', clientId: 'sluice', clientSecret: 'secret-of-sluice', name: 'id.example.com' });
    expect(loadConfig({ ...full, OIDC_NAME: 'Example' }).oidc?.name).toBe('Example');
    expect(maskedConfig(config).oidc?.clientSecret).toBe('***');
    expect(loadConfig({ ...full, OIDC_ISSUER: 'http://127.0.0.1:4000' }).oidc?.issuer).toBe('http://127.0.0.1:4000');
  });

  it.each([
    [{ OIDC_ISSUER: full.OIDC_ISSUER }, 'OIDC_CLIENT_ID'],
    [{ OIDC_ISSUER: full.OIDC_ISSUER, OIDC_CLIENT_ID: 'sluice' }, 'OIDC_CLIENT_SECRET'],
    [{ OIDC_CLIENT_ID: 'sluice', OIDC_CLIENT_SECRET: 'x' }, 'OIDC_ISSUER'],
    [{ OIDC_NAME: 'Example' }, 'OIDC_ISSUER'],
    [{ ...full, OIDC_ISSUER: 'id.example.com' }, 'OIDC_ISSUER'],
    [{ ...full, OIDC_ISSUER: 'http://id.example.com' }, 'OIDC_ISSUER'],
    [{ ...full, OIDC_ISSUER: 'https://id.example.com/?tenant=1' }, 'OIDC_ISSUER'],
  ])('stops on a partial or bad configuration %o, naming %s', (env, variable) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});
