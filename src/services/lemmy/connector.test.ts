import { beforeAll, describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { row } from './row.ts';
import { lemmy as module } from './index.ts';
import { bodyHtml, LEMMY_PAGE, lemmy, lemmyItem, parseLemmyInput } from './connector.ts';

type Json = Record<string, unknown>;
const communityPage = fixtureJson('lemmy/post_list_community_new.json') as { posts: Json[] };
const searchPage = fixtureJson('lemmy/search_posts_new.json') as { posts: Json[] };
const NOW = Date.parse('2026-08-01T09:00:00Z');

let host: string;
const server = useSourceServer();
const ctx = () => ({ fetch: server.fetcher, services: loadConfig({}).services, now: NOW });
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'lemmy', type, input: value });
const community = () => input('community', `http://${host}/c/technology`);

beforeAll(() => {
  host = new URL(server.base).host;
});

describe('lemmy input forms', () => {
  it.each([
    ['community', '!technology@lemmy.world', 'https://lemmy.world', 'technology'],
    ['community', 'technology@lemmy.world', 'https://lemmy.world', 'technology'],
    ['community', 'https://lemmy.world/c/technology', 'https://lemmy.world', 'technology'],
    ['community', 'https://lemmy.ml/c/technology@lemmy.world', 'https://lemmy.ml', 'technology@lemmy.world'],
    ['search', 'repairable laptop@lemmy.world', 'https://lemmy.world', 'repairable laptop'],
    ['search', 'https://lemmy.world/search?q=repairable%20laptop&type=Posts', 'https://lemmy.world', 'repairable laptop'],
    ['search', 'http://127.0.0.1:8536/search?q=laptop', 'http://127.0.0.1:8536', 'laptop'],
  ])('%s %s', (type, value, origin, name) => {
    expect(parseLemmyInput(type, value)).toMatchObject({ origin, name });
  });

  it.each([
    ['community', 'technology'],
    ['community', '!technology@127.0.0.1'],
    ['community', 'http://lemmy.world/c/technology'],
    ['community', 'https://lemmy.world/search?q=x'],
    ['search', 'https://lemmy.world/search'],
    ['search', 'laptop@localhost'],
    ['search', 'http://127.0.0.1/@evil.example.com'],
  ])('refuses %s %s for good', (type, value) => {
    expect(() => parseLemmyInput(type, value)).toThrow(expect.objectContaining({ permanent: true }));
  });

  it.each([
    '!technology@127.0.0.1', '!technology@localhost', '!technology@[::1]', 'technology@2130706433', 'technology@0x7f000001', 'laptop@169.254.169.254',
    'laptop@10.0.0.1', 'https://127.0.0.1/c/technology', 'https://[::1]/search?q=x', 'http://127.0.0.1:8536/c/technology',
    'http://lemmy.world/c/technology', 'https://user:pw@lemmy.world/c/technology', 'http://127.0.0.1/@evil.example.com', 'technology', '',
  ])('the row refuses %j without ALLOW_PRIVATE_FETCH', (value) => {
    expect(row.checkInput(value, { allowPrivateFetch: false })).toMatch(/^input must be/);
  });
  // A local instance only with ALLOW_PRIVATE_FETCH (refused without it above), the public forms always.
  it.each([
    ['http://127.0.0.1:8536/c/technology', true],
    ['!technology@lemmy.world', false],
    ['repairable laptop@lemmy.world', false],
    ['https://lemmy.world/c/technology', false],
    ['https://lemmy.world/search?q=laptop', false],
  ])('the row takes %j (ALLOW_PRIVATE_FETCH %s)', (value, allowPrivateFetch) => {
    expect(row.checkInput(value, { allowPrivateFetch })).toBeNull();
  });

  it('names one source by its forms (duplicates)', () => {
    const form = module.sourceForm;
    expect(form('community', '!Technology@lemmy.world')).toBe(form('community', 'https://LEMMY.world/c/technology'));
    expect(form('search', 'Repairable  laptop @lemmy.world')).toBe(form('search', 'https://lemmy.world/search?q=repairable%20laptop'));
  });
});

describe('lemmy', () => {
  it('maps the community page field by field: a link post, an image post, a text post (and the pinned post)', async () => {
    server.handle(() => ({ body: communityPage }));
    const { items, state } = await lemmy.collect(community(), {}, ctx());
    expect(server.requests.map((r) => r.url)).toEqual([`/api/v3/post/list?community_name=technology&sort=New&limit=${LEMMY_PAGE}&page=1`]);
    expect(items.map((i) => [i.id, i.type])).toEqual([
      [`lemmy_${host}:1022331`, 'status'], [`lemmy_${host}:31877202`, 'link'], [`lemmy_${host}:31876950`, 'image'], [`lemmy_${host}:31876511`, 'status'],
    ]);
    expect(items[1]).toEqual({
      id: `lemmy_${host}:31877202`,
      service: 'lemmy',
      type: 'link',
      title: 'A new open standard for repairable laptops was published today',
      text: '<p>Repairable laptop standard published</p>\n<p>A consortium of makers agreed on common screws, batteries and boards.</p>',
      tags: ['technology'],
      url: 'https://news.example.org/2026/08/01/repairable-laptop-standard',
      date: '2026-08-01T08:15:42.481Z',
      author: { name: 'Kim L.', username: 'kim_l', userid: '88231', url: 'https://lemmy.world/u/kim_l' },
      media: [{ type: 'image', url: 'https://lemmy.world/pictrs/image/5c2f1e0a-7b1d-4e54-9c9e-2b2b8a8e1f10.jpeg' }],
      kudos: { score: 128 + 37, lemmy_score: 128, lemmy_upvotes: 140, lemmy_downvotes: 12, lemmy_comments: 37 },
    });
    expect(items[2]).toEqual({
      id: `lemmy_${host}:31876950`,
      service: 'lemmy',
      type: 'image',
      title: 'My desk after the upgrade',
      text: '',
      tags: ['technology'],
      url: 'https://lemmy.world/post/31876950',
      date: '2026-08-01T08:02:11.004Z',
      author: { name: 'rajv', username: 'rajv', userid: '90412', url: 'https://lemmy.world/u/rajv' },
      media: [{ type: 'image', url: 'https://lemmy.world/pictrs/image/a1b2c3d4-0e0f-4a4b-8c8d-112233445566.png', alt: 'A standing desk with two monitors and a split keyboard' }],
      kudos: { score: 56 + 9, lemmy_score: 56, lemmy_upvotes: 57, lemmy_downvotes: 1, lemmy_comments: 9 },
    });
    expect(items[3]).toEqual({
      id: `lemmy_${host}:31876511`,
      service: 'lemmy',
      type: 'status',
      title: 'Which e-reader lets you sideload EPUB without an account?',
      // Markdown shown as written, escaped (the script is text), links made links.
      // Markdown rendered (lib/markdown.ts): emphasis, the bare URL a link, the raw HTML text.
      text: "<p>I'm looking for an e-reader that works <strong>offline</strong>.</p>\n<p>I tried a few; see <a href=\"https://wiki.example.net/e-readers\">https://wiki.example.net/e-readers</a> for my notes.\nAny tips? &lt;script&gt;alert(1)&lt;/script&gt;</p>",
      tags: ['technology'],
      url: 'https://lemmy.world/post/31876511',
      date: '2026-08-01T07:40:58.770Z',
      author: { name: 'Kim L.', username: 'kim_l', userid: '88231', url: 'https://lemmy.world/u/kim_l' },
      media: null,
      kudos: { score: 14 + 22, lemmy_score: 14, lemmy_upvotes: 15, lemmy_downvotes: 1, lemmy_comments: 22 },
    });
    expect(state).toEqual({ newestId: '31877202' });
  });

  it('pages across polls: a later poll returns only newer posts, walks on while pages are full, and a pinned post does not stop it', async () => {
    server.handle(() => ({ body: communityPage }));
    const first = await lemmy.collect(community(), {}, ctx());
    server.requests.length = 0;

    // Two new posts arrived; page 1 now starts with the pinned post, then the two new ones.
    const [pinned, ...rest] = communityPage.posts;
    const fresh = (id: number) => ({ ...rest[2], post: { ...(rest[2]!.post as Json), id, ap_id: `https://lemmy.world/post/${id}` } });
    server.handle(() => ({ body: { posts: [pinned, fresh(31877300), fresh(31877299), ...rest] } }));
    const second = await lemmy.collect(community(), first.state, ctx());
    expect(server.requests.map((r) => r.parsed.searchParams.get('page'))).toEqual(['1']);
    expect(second.items.map((i) => i.id)).toEqual([`lemmy_${host}:31877300`, `lemmy_${host}:31877299`]);
    expect(second.state).toEqual({ newestId: '31877300' });

    // A full page of new posts: the next page is read too, until a known post shows.
    server.requests.length = 0;
    const full = Array.from({ length: LEMMY_PAGE }, (_, n) => fresh(31878000 - n));
    server.handle((req) => ({ body: { posts: req.parsed.searchParams.get('page') === '1' ? full : [fresh(31877301), ...rest] } }));
    const third = await lemmy.collect(community(), second.state, ctx());
    expect(server.requests.map((r) => r.parsed.searchParams.get('page'))).toEqual(['1', '2']);
    expect(third.items).toHaveLength(LEMMY_PAGE + 1);
    expect(third.state).toEqual({ newestId: '31878000' });
  });

  it('searches posts, newest first', async () => {
    server.handle(() => ({ body: searchPage }));
    const { items } = await lemmy.collect(input('search', `http://${host}/search?q=repairable+laptop`), {}, ctx());
    expect(server.requests.map((r) => r.url)).toEqual([`/api/v3/search?q=repairable+laptop&type_=Posts&sort=New&limit=${LEMMY_PAGE}&page=1`]);
    expect(items.map((i) => i.id)).toEqual([`lemmy_${host}:31877202`, `lemmy_${host}:31876511`]);
  });

  it('renders a body as paragraphs of escaped text with links', () => {
    expect(bodyHtml('a\n\n[x](javascript:alert(1)) <b>b</b>')).toBe('<p>a</p>\n<p>[x](javascript:alert(1)) &lt;b&gt;b&lt;/b&gt;</p>');
    expect(lemmyItem({}, 'lemmy.world')).toBeNull();
  });

  // Lemmy 0.19 answers its failures as 400 {"error": "<code>"} (a rate limit too; later versions 429).
  it.each([
    {
      name: 'a rate_limit_error answered as 400 is transient and waits for the reset header',
      reply: { status: 400, body: { error: 'rate_limit_error' }, headers: { 'retry-after': '30' } },
      failure: { permanent: false, retryAfterMs: 30_000, message: 'HTTP 400: rate_limit_error' },
    },
    {
      name: 'a community the instance does not know (400 couldnt_find_community) is a permanent failure',
      reply: { status: 400, body: { error: 'couldnt_find_community' } },
      failure: { permanent: true, message: 'HTTP 400: couldnt_find_community (not found)' },
    },
    {
      name: 'a community the instance does not know (404) is a permanent failure',
      reply: { status: 404, body: { error: 'couldnt_find_community' } },
      failure: { permanent: true, message: 'HTTP 404: couldnt_find_community (not found)' },
    },
    {
      name: 'an answer without posts is a transient failure',
      reply: { body: { error: null } },
      failure: { permanent: false, message: 'lemmy <host> answered without a list of posts' },
    },
  ])('$name', async ({ reply, failure }) => {
    server.handle(() => reply);
    const error = await lemmy.collect(community(), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ ...failure, message: failure.message.replace('<host>', host) });
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await lemmy.collect(community(), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});
