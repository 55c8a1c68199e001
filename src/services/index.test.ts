import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { SERVICE_NAMES, SERVICES } from './table.ts';
import { connectorFor, kudosServices, lookupServices } from './index.ts';

describe('the service table and the connectors', () => {
  it.each(SERVICE_NAMES)('%s has a connector for its service', (service) => {
    expect(connectorFor(service)?.service).toBe(service);
  });

  it('has no connector for a name outside the table', () => {
    for (const name of ['', 'myspace', 'constructor', '__proto__', 'toString']) expect(connectorFor(name)).toBeUndefined();
  });

  it.each(SERVICE_NAMES)('configuration reads every base URL and credential of %s', (service) => {
    const { urls, credentials } = SERVICES[service] as { urls: Record<string, readonly [string, string]>; credentials: Record<string, { variable: string }> };
    // A WebSocket address (its default ws: or wss:) is set as one.
    const scheme = (fallback: string) => (/^wss?:/.test(fallback) ? 'wss' : 'https');
    const env = Object.fromEntries([
      ...Object.values(urls).map(([variable, fallback]) => [variable, `${scheme(fallback)}://${variable.toLowerCase()}.example`]),
      ...Object.values(credentials).map(({ variable }) => [variable, `value of ${variable}`]),
    ]);
    const settings = loadConfig(env).services[service] as Record<string, string | undefined>;
    expect(Object.keys(settings).sort()).toEqual([...Object.keys(urls), ...Object.keys(credentials)].sort());
    for (const [key, [variable, fallback]] of Object.entries(urls)) expect(settings[key]).toBe(`${scheme(fallback)}://${variable.toLowerCase()}.example`);
    for (const [key, { variable }] of Object.entries(credentials)) expect(settings[key]).toBe(`value of ${variable}`);
    const defaults = loadConfig({}).services[service] as Record<string, string | undefined>;
    for (const [key, [, fallback]] of Object.entries(urls)) expect(defaults[key]).toBe(fallback);
    for (const key of Object.keys(credentials)) expect(defaults[key]).toBeUndefined();
  });

  // docs/services.md#re-verification: the services whose API reads items by id, with the most
  // items one request reads. Instagram (media by id only for their owner) and feeds have none and
  // are never claimed; Tumblr and Flickr read one item a request, for the re-verification only
  // (docs/services.md#kudos-refresh: the refresh's ~50 reads an item would spend their daily limits).
  it('claims for the kudos refresh and re-verification exactly the services with a lookup, each with its batch size', () => {
    expect(Object.fromEntries(lookupServices().map((service) => [service, connectorFor(service)!.lookup!.batch]))).toEqual({
      twitter: 100, facebook: 50, youtube: 50, vimeo: 100, vk: 100, mastodon: 20, bluesky: 25, tumblr: 1, flickr: 1, reddit: 100, tiktok: 20,
    });
    expect(kudosServices().sort()).toEqual(['bluesky', 'facebook', 'mastodon', 'reddit', 'tiktok', 'twitter', 'vimeo', 'vk', 'youtube']);
    for (const service of ['rss', 'instagram']) expect(connectorFor(service)!.lookup).toBeUndefined();
  });
});
