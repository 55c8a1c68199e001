import { beforeAll, describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { row } from './row.ts';
import { pixelfed as module } from './index.ts';
import { parsePixelfedInput, pixelfed, pixelfedItem } from './connector.ts';

type Json = Record<string, unknown>;
const tagTimeline = fixtureJson('pixelfed/timelines_tag_seascape.json') as Json[];
const account = fixtureJson('pixelfed/account_lookup.json') as Json;
const accountStatuses = fixtureJson('pixelfed/account_statuses.json') as Json[];
const NOW = Date.parse('2026-08-01T08:00:00Z');

let host: string;
const server = useSourceServer();
const ctx = (env: Record<string, string> = {}) => ({ fetch: server.fetcher, services: loadConfig(env).services, now: NOW });
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'pixelfed', type, input: value });

beforeAll(() => {
  host = new URL(server.base).host;
});

describe('pixelfed input forms', () => {
  it.each([
    ['tag', 'seascape@pixelfed.social', 'https://pixelfed.social', 'seascape'],
    ['tag', '#seascape@pixelfed.social', 'https://pixelfed.social', 'seascape'],
    ['tag', 'https://pixelfed.social/discover/tags/seascape', 'https://pixelfed.social', 'seascape'],
    ['tag', 'https://pixelfed.social/tags/seascape', 'https://pixelfed.social', 'seascape'],
    ['user', 'ann_shore@pixelfed.social', 'https://pixelfed.social', 'ann_shore'],
    ['user', '@ann_shore@pixelfed.social', 'https://pixelfed.social', 'ann_shore'],
    ['user', 'https://pixelfed.social/ann_shore', 'https://pixelfed.social', 'ann_shore'],
    ['user', 'https://pixelfed.social/@ann_shore', 'https://pixelfed.social', 'ann_shore'],
    ['user', 'http://127.0.0.1:8080/ann_shore', 'http://127.0.0.1:8080', 'ann_shore'],
  ])('%s %s', (type, value, origin, name) => {
    expect(parsePixelfedInput(type, value)).toMatchObject({ origin, name });
  });

  it.each([
    ['tag', 'http://pixelfed.social/discover/tags/seascape'], // plain http without a port: not a local instance
    ['tag', 'https://pixelfed.social/ann_shore'],
    ['tag', 'https://pixelfed.social/discover/tags/%E0%A4%A'], // a broken escape is a bad input, not a URIError
    ['user', 'ann_shore'],
    ['user', 'ann_shore@127.0.0.1'],
    ['user', 'ann_shore@[::1]'],
    ['user', 'ann_shore@2130706433'],
  ])('refuses %s %s for good', (type, value) => {
    expect(() => parsePixelfedInput(type, value)).toThrow(expect.objectContaining({ permanent: true }));
  });

  // The management API's check (docs/services.md#pixelfed): private addresses in every form are
  // refused before any request; a local instance only with ALLOW_PRIVATE_FETCH.
  it.each([
    'seascape@127.0.0.1', 'seascape@localhost', 'seascape@[::1]', 'seascape@2130706433', 'seascape@0x7f000001', 'seascape@0177.0.0.1',
    'seascape@169.254.169.254', 'seascape@10.0.0.1', 'https://127.0.0.1/discover/tags/seascape', 'https://[::ffff:127.0.0.1]/tags/seascape',
    'https://localhost/ann_shore', 'http://127.0.0.1:8080/ann_shore', 'http://pixelfed.social/ann_shore', 'https://user:pw@pixelfed.social/ann_shore',
    'seascape', '', 'seascape@pixelfed.social/../x',
  ])('the row refuses %j without ALLOW_PRIVATE_FETCH', (value) => {
    expect(row.checkInput(value, { allowPrivateFetch: false })).toMatch(/^input must be/);
  });
  it('names one source by its forms (duplicates)', () => {
    const form = module.sourceForm;
    expect(form('tag', '#Seascape@pixelfed.social')).toBe(form('tag', 'https://pixelfed.social/discover/tags/seascape'));
    expect(form('tag', 'seascape@pixelfed.social')).toBe(form('tag', 'https://Pixelfed.social/tags/Seascape'));
    expect(form('user', '@ann_shore@pixelfed.social')).toBe(form('user', 'https://pixelfed.social/ann_shore'));
    expect(form('user', 'ann_shore@pixelfed.social')).toBe(form('user', 'https://pixelfed.social/@ann_shore'));
    expect(form('user', 'ann_shore@pixelfed.social')).not.toBe(form('user', 'ann_shore@pixelfed.de'));
  });

  it('the row takes a local instance only with ALLOW_PRIVATE_FETCH, and the public forms always', () => {
    expect(row.checkInput('http://127.0.0.1:8080/discover/tags/seascape', { allowPrivateFetch: true })).toBeNull();
    for (const ok of ['seascape@pixelfed.social', '#seascape@pixelfed.social', '@ann_shore@pixelfed.social', 'https://pixelfed.social/discover/tags/seascape', 'https://pixelfed.social/ann_shore']) {
      expect(row.checkInput(ok, { allowPrivateFetch: false }), ok).toBeNull();
    }
  });
});

describe('pixelfed', () => {
  it('maps the tag timeline field by field: a photo with its alt text, an album of photos, a video', async () => {
    server.handle(() => ({ body: tagTimeline }));
    const { items, state } = await pixelfed.collect(input('tag', 'http://' + host + '/discover/tags/seascape'), {}, ctx());
    expect(server.requests.map((r) => r.url)).toEqual(['/api/v1/timelines/tag/seascape?limit=40']);
    expect(items[0]).toEqual({
      id: `pixelfed_${host}:724815473498412345`,
      service: 'pixelfed',
      type: 'image',
      text: 'Low tide this morning <a href="https://pixelfed.social/discover/tags/seascape?src=hash" title="#seascape" class="u-url hashtag" rel="external nofollow noopener">#seascape</a> <a href="https://pixelfed.social/discover/tags/film?src=hash" title="#film" class="u-url hashtag" rel="external nofollow noopener">#film</a>',
      tags: ['seascape', 'film'],
      url: 'https://pixelfed.social/p/ann_shore/724815473498412345',
      date: '2026-08-01T07:42:10.000Z',
      author: { name: 'Ann Shore', username: 'ann_shore', userid: '402851617735459234', url: 'https://pixelfed.social/ann_shore' },
      media: [{ type: 'image', url: 'https://pxscdn.com/public/m/_v2/402851617735459234/0d8a7c/lowtide.jpg', width: 1440, height: 960, alt: 'Wet sand reflecting a pale sky at low tide, a dog far away' }],
      kudos: { score: 23 + 2 * 2 + 4, pixelfed_favourites: 23, pixelfed_reblogs: 2, pixelfed_replies: 4 },
      language: 'en',
    });
    // An album: every photo, an alt only where the author wrote one.
    expect(items[1]).toMatchObject({ type: 'image', media: [
      { type: 'image', url: 'https://pxscdn.com/public/m/_v2/402851617735460001/9f01aa/harbour1.jpg', width: 1080, height: 1350, alt: 'Red fishing boat moored against a stone quay' },
      { type: 'image', url: 'https://pxscdn.com/public/m/_v2/402851617735460001/9f01aa/harbour2.jpg', width: 1080, height: 1350 },
      { type: 'image', url: 'https://pxscdn.com/public/m/_v2/402851617735460001/9f01aa/harbour3.jpg', width: 1350, height: 1080, alt: 'Gulls on the lighthouse railing' },
    ] });
    expect(items[1]!.media![1]).not.toHaveProperty('alt');
    expect(items[2]).toMatchObject({ type: 'video', media: [{
      type: 'embed',
      url: 'https://pxscdn.com/public/m/_v2/402851617735459234/77b2e1/breakwater.mp4',
      embed: '<video controls src="https://pxscdn.com/public/m/_v2/402851617735459234/77b2e1/breakwater.mp4" poster="https://pxscdn.com/public/m/_v2/402851617735459234/77b2e1/breakwater_thumb.jpeg"></video>',
      duration: 12.4,
      alt: 'Grey waves breaking over concrete blocks',
    }] });
    expect(state).toEqual({ minId: '724815473498412345' }); // no Link header: the newest id
  });

  it('looks the account up once, then pages with min_id from the newest id', async () => {
    server.handle((req) => (req.parsed.pathname === '/api/v1/accounts/lookup' ? { body: account } : { body: accountStatuses }));
    const local = input('user', `http://${host}/ann_shore`);
    const first = await pixelfed.collect(local, {}, ctx());
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/v1/accounts/lookup?acct=ann_shore',
      '/api/v1/accounts/402851617735459234/statuses?limit=40&exclude_replies=true',
    ]);
    expect(first.items.map((i) => [i.id, i.type])).toEqual([
      [`pixelfed_${host}:724815473498412345`, 'image'], [`pixelfed_${host}:724814999988877766`, 'video'], [`pixelfed_${host}:724700011122233344`, 'image'],
    ]);
    expect(first.state).toEqual({ minId: '724815473498412345', accountId: '402851617735459234', accountOf: local.input });

    server.requests.length = 0;
    server.handle(() => ({ body: [], headers: { link: `<http://${host}/api/v1/accounts/402851617735459234/statuses?min_id=724815473498412345>; rel="prev"` } }));
    const second = await pixelfed.collect(local, first.state, ctx());
    expect(server.requests.map((r) => r.url)).toEqual(['/api/v1/accounts/402851617735459234/statuses?limit=40&exclude_replies=true&min_id=724815473498412345']);
    expect(second).toEqual({ items: [], state: first.state });
  });

  it('an account the instance does not know is a permanent failure', async () => {
    server.handle(() => ({ status: 404, body: { error: 'Record not found' } }));
    const error = await pixelfed.collect(input('user', `http://${host}/nobody`), {}, ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, message: 'HTTP 404: Record not found' });
  });

  // Hostile: the account name is the input's text; one made of credential words must not make its
  // "not found" read as the failure of the contract's token (collect/credentials.ts).
  it('an account answered without an id is the input\'s failure, not the credential\'s, whatever its name', async () => {
    server.handle(() => ({ body: {} }));
    const error = await pixelfed.collect(input('user', `http://${host}/expired_password`), {}, ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, credential: false, message: 'pixelfed account expired_password not found' });
  });

  it('a reblog becomes the status it shares', () => {
    const item = pixelfedItem({ id: '1', reblog: tagTimeline[0] }, 'pixelfed.social');
    expect(item).toMatchObject({ id: 'pixelfed_pixelfed.social:724815473498412345', author: { username: 'ann_shore' } });
  });

  it('sends the credential token to its own instance only', async () => {
    server.handle(() => ({ body: [] }));
    await pixelfed.collect(input('tag', `http://${host}/discover/tags/seascape`), {}, ctx({ PIXELFED_ACCESS_TOKEN: 'tok', PIXELFED_INSTANCE: `http://${host}` }));
    await pixelfed.collect(input('tag', `http://${host}/discover/tags/seascape`), {}, ctx({ PIXELFED_ACCESS_TOKEN: 'tok', PIXELFED_INSTANCE: 'pixelfed.social' }));
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok', undefined]);
  });

  it('waits for the reset time when the quota is used up', async () => {
    server.handle(() => ({ body: [], headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-08-01T08:05:00.000Z' } }));
    const { nextRunAt } = await pixelfed.collect(input('tag', `http://${host}/discover/tags/seascape`), {}, ctx());
    expect(nextRunAt).toBe(Date.parse('2026-08-01T08:05:00.000Z'));
  });

  // A full page of a later poll that uses the quota up: asking on would be refused (429) and the
  // poll would fail, losing the page it read.
  it('a later poll stops at the page that uses the quota up, keeping its statuses, the next poll at the reset', async () => {
    const full = Array.from({ length: 40 }, (_, n) => ({ ...tagTimeline[0], id: String(724815473498412400 + n) }));
    const spent: Record<string, string> = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2026-08-01T08:05:00.000Z' };
    const refused: Record<string, string> = { 'retry-after': '300' };
    server.handle((req) => (req.parsed.searchParams.get('min_id') === '1'
      ? { body: full, headers: spent }
      : { status: 429, body: { error: 'Too many requests' }, headers: refused }));
    const result = await pixelfed.collect(input('tag', `http://${host}/discover/tags/seascape`), { minId: '1' }, ctx());
    expect(server.requests).toHaveLength(1);
    expect(result.items).toHaveLength(40);
    expect(result.nextRunAt).toBe(Date.parse('2026-08-01T08:05:00.000Z'));
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await pixelfed.collect(input('tag', `http://${host}/discover/tags/seascape`), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});
