import { describe, expect, it } from 'vitest';
import { type FakeRequest, type FakeResponse, fixtureJson, useFakeApi } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SERVICES } from '../table.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { postToItem, reddit, redditUserAgent, removedReason } from './connector.ts';
import { reddit as module } from './index.ts';

const api = useFakeApi();
const NOW = Date.parse('2026-11-27T12:00:00Z');
let apps = 0;
/** Settings of a new app (its own client id, so no token or spent limit of another test is reused). */
const settings = (extra: Record<string, string> = {}) => loadConfig({
  REDDIT_API_URL: api.base, REDDIT_TOKEN_URL: `${api.base}/api/v1/access_token`,
  REDDIT_CLIENT_ID: `client-${++apps}`, REDDIT_CLIENT_SECRET: 'secret', REDDIT_USERNAME: 'sluice_bot', ...extra,
}).services;
const ctx = (services = settings(), now = NOW) => ({ fetch: api.fetcher, now, services });
const input = (type: string, value: string): SourceInput => ({ id: 'a'.repeat(24), service: 'reddit', type, input: value });

type Interaction = { request: { uri: string }; status: { code: number }; headers: Record<string, string>; body: unknown };
const cassette = (file: string): Interaction[] => fixtureJson('reddit', file);
const reply = (i: Interaction): FakeResponse => ({ status: i.status.code, headers: i.headers, body: i.body });
const [tokenAnswer, newPage, beforePage] = cassette('r_all_new_before_cassette.json');
const isToken = (req: FakeRequest) => req.path === '/api/v1/access_token';
/** A fake Reddit: the recorded token, and `listing` for every other path. */
const serve = (listing: (req: FakeRequest) => FakeResponse) => (req: FakeRequest) => (isToken(req) ? reply(tokenAnswer!) : listing(req));
const listingOf = (i: Interaction, at = 0) => (Array.isArray(i.body) ? i.body[at] : i.body) as { data: { children: { data: Record<string, unknown> }[] } };

describe('reddit: token and requests', () => {
  it("asks the app's token with the client credentials grant, sends it as Bearer with Reddit's User-Agent, and keeps it", async () => {
    api.respond = serve(() => reply(newPage!));
    const services = settings();
    await reddit.collect(input('subreddit', 'r/all'), {}, ctx(services));
    await reddit.collect(input('subreddit', 'all'), {}, ctx(services));
    expect(api.requests.map((r) => r.path)).toEqual(['/api/v1/access_token', '/r/all/new', '/r/all/new']);
    const [token, listing] = api.requests;
    expect(token!.headers.authorization).toBe(`Basic ${Buffer.from(`${services.reddit.clientId}:secret`).toString('base64')}`);
    expect(token!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(token!.headers['user-agent']).toBe('server:sluice:0.1 (by /u/sluice_bot)');
    expect(listing!.headers.authorization).toBe('Bearer <ACCESS_TOKEN>');
    expect(listing!.headers['user-agent']).toBe('server:sluice:0.1 (by /u/sluice_bot)');
    expect(Object.fromEntries(listing!.query)).toEqual({ limit: '25', raw_json: '1' });
  });

  it('asks a new token once the old one expires (expires_in, seconds)', async () => {
    api.respond = serve(() => reply(newPage!));
    const services = settings();
    await reddit.collect(input('subreddit', 'all'), {}, ctx(services));
    await reddit.collect(input('subreddit', 'all'), {}, ctx(services, NOW + 3600_000));
    expect(api.requests.filter(isToken)).toHaveLength(2);
  });

  it('asks a new token when the API refuses the cached one (401), and fails for good when it refuses the new one too', async () => {
    const [refused] = cassette('invalid_token_401_cassette.json');
    const services = settings();
    let refuse = 1;
    api.respond = serve(() => (refuse-- > 0 ? reply(refused!) : reply(newPage!)));
    const { items } = await reddit.collect(input('subreddit', 'all'), {}, ctx(services));
    expect(items).toHaveLength(10);
    expect(api.requests.map((r) => r.path)).toEqual(['/api/v1/access_token', '/r/all/new', '/api/v1/access_token', '/r/all/new']);
    api.respond = serve(() => reply(refused!));
    const error = await reddit.collect(input('subreddit', 'all'), {}, ctx(services)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent: true, message: 'reddit refused a new app token: HTTP 401: Unauthorized' });
  });

  it.each([
    { name: 'a refused app (401)', answer: { status: 401, body: { message: 'Unauthorized', error: 401 } }, message: 'reddit app token refused: HTTP 401: Unauthorized', permanent: true },
    { name: 'an answer without a token', answer: { body: { error: 'unsupported_grant_type' } }, message: 'reddit app token refused: unsupported_grant_type', permanent: true },
    { name: 'a 503', answer: { status: 503, headers: { 'retry-after': '30' }, body: 'busy' }, message: 'reddit app token refused: HTTP 503', permanent: false },
  ])('reports $name at the token endpoint', async ({ answer, message, permanent }) => {
    api.respond = (req) => (isToken(req) ? answer : reply(newPage!));
    const error = await reddit.collect(input('subreddit', 'all'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ message, permanent });
    expect(api.requests.filter((r) => !isToken(r))).toHaveLength(0);
  });

  it('names both variables when the app is not configured', async () => {
    const services = loadConfig({ REDDIT_API_URL: api.base }).services;
    await expect(reddit.collect(input('subreddit', 'all'), {}, ctx(services))).rejects.toMatchObject({ permanent: true, message: 'reddit is not configured: set REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET' });
    expect(api.requests).toHaveLength(0);
  });

  it('sends no username it was not given', () => {
    expect(redditUserAgent(undefined)).toBe('server:sluice:0.1');
  });
});

describe('reddit: the before cursor', () => {
  it('reads the newest 25 first, then asks 100 newer than the newest seen (the recorded r/all/new stream)', async () => {
    api.respond = serve((req) => (req.query.get('before') === 't3_5jo13y' ? reply(beforePage!) : reply(newPage!)));
    const first = await reddit.collect(input('subreddit', 'all'), {}, ctx());
    expect(first.items.map((i) => i.id)).toEqual(listingOf(newPage!).data.children.map((c) => `reddit_${c.data.id as string}`));
    expect(first.state).toMatchObject({ before: 't3_5jo13y', since: 1482373050, empty: 0 });
    const second = await reddit.collect(input('subreddit', 'all'), first.state, ctx());
    expect(api.requests.at(-1)!.query.get('before')).toBe('t3_5jo13y');
    expect(api.requests.at(-1)!.query.get('limit')).toBe('100');
    expect(second.items.map((i) => i.id)).toEqual(['reddit_5jo144', 'reddit_5jo143', 'reddit_5jo141', 'reddit_5jo140']);
    expect(second.state).toMatchObject({ before: 't3_5jo144', since: 1482373052, empty: 0 });
    expect((second.state.seen as string[]).slice(0, 4)).toEqual(['t3_5jo144', 't3_5jo143', 't3_5jo141', 't3_5jo140']);
  });

  it('follows the answer\'s before for at most 5 pages', async () => {
    const page = listingOf(beforePage!);
    api.respond = serve((req) => ({ body: { kind: 'Listing', data: { before: `t3_page${req.query.get('before')!.length}`, children: page.data.children } } }));
    await reddit.collect(input('subreddit', 'all'), { before: 't3_5jo13y', since: 1 }, ctx());
    expect(api.requests.filter((r) => !isToken(r))).toHaveLength(5);
  });

  // Hostile: a deleted anchor makes Reddit answer nothing newer, forever.
  it('after 3 empty answers in a row reads the newest page again and keeps only what is newer than seen', async () => {
    api.respond = serve((req) => (req.query.get('before') ? { body: { kind: 'Listing', data: { before: null, children: [] } } } : reply(newPage!)));
    // Six posts of the page share the newest second (1482373050); five of them were seen.
    let state: Record<string, unknown> = { before: 't3_deleted', since: 1482373050, seen: ['t3_5jo13x', 't3_5jo13w', 't3_5jo13v', 't3_5jo13u', 't3_5jo13t'] };
    for (let n = 1; n <= 3; n++) {
      const polled = await reddit.collect(input('subreddit', 'all'), state, ctx());
      expect(polled.items).toEqual([]);
      state = polled.state;
      expect(state.empty).toBe(n);
    }
    const rescan = await reddit.collect(input('subreddit', 'all'), state, ctx());
    expect(api.requests.at(-1)!.query.get('before')).toBeNull();
    expect(rescan.items.map((i) => i.id)).toEqual(['reddit_5jo13y']);
    expect(rescan.state).toMatchObject({ before: 't3_5jo13y', empty: 0 });
  });
});

describe('reddit: items field by field', () => {
  it.each([
    {
      name: 'subreddit: a YouTube link post as an embedded player, its preview and score as kudos',
      page: () => newPage!, value: 'https://www.reddit.com/r/all/', state: {},
      item: {
        id: 'reddit_5jo13y', service: 'reddit', type: 'video',
        title: 'Farewell Rush - We will never forget your stream',
        text: '<a href="https://www.youtube.com/watch?v=w5aNSHEUfJE" rel="nofollow noopener">https://www.youtube.com/watch?v=w5aNSHEUfJE</a>',
        tags: [], url: 'https://www.reddit.com/r/LeagueOfVideos/comments/5jo13y/farewell_rush_we_will_never_forget_your_stream/',
        date: '2016-12-22T02:17:30.000Z',
        author: { name: 'AnotherProGamer', username: 'AnotherProGamer', userid: null, url: 'https://www.reddit.com/user/AnotherProGamer/' },
        media: [{
          type: 'embed', url: 'https://www.youtube.com/watch?v=w5aNSHEUfJE',
          embed: '<iframe width="640" height="360" src="https://www.youtube.com/embed/w5aNSHEUfJE?feature=oembed" title="We Will Miss You Rush - Goodbye from streaming :(" frameborder="0" allowfullscreen></iframe>',
        }],
        kudos: { score: 1, reddit_score: 1, reddit_comments: 0 },
      },
    },
    {
      name: 'subreddit (second poll): a news link with its preview image',
      page: () => beforePage!, value: 'all', state: { before: 't3_5jo13y' },
      item: {
        id: 'reddit_5jo144', service: 'reddit', type: 'link',
        title: "Newly discovered disease could hold key to Alzheimer's, Parkinson's – and even ageing",
        text: '<a href="http://www.independent.co.uk/news/science/dementia-alzheimers-parkinsons-disease-genetic-condition-ageing-a7489111.html" rel="nofollow noopener">http://www.independent.co.uk/news/science/dementia-alzheimers-parkinsons-disease-genetic-condition-ageing-a7489111.html</a>',
        tags: [], url: 'https://www.reddit.com/r/UpliftingNews/comments/5jo144/newly_discovered_disease_could_hold_key_to/',
        date: '2016-12-22T02:17:32.000Z',
        author: { name: '3joan', username: '3joan', userid: null, url: 'https://www.reddit.com/user/3joan/' },
        media: [{ type: 'image', url: 'https://i.redditmedia.com/XqS9eSAC9W9Y0P4IZm469S0r_98bybXejITy33Bl58I.jpg?s=1ad79c72faa2baae42b9caf37f721fb9', width: 2048, height: 1536 }],
        kudos: { score: 1, reddit_score: 1, reddit_comments: 0 },
      },
    },
  ])('$name', async ({ page, value, state, item }) => {
    api.respond = serve(() => reply(page()));
    const { items } = await reddit.collect(input('subreddit', value), state, ctx());
    expect(items[0]).toEqual(item);
  });

  it.each([
    {
      name: 'search: asks /search sorted by new; a self post with its HTML, comments in the score',
      type: 'search', value: 'praw oauth search', file: 'search_cassette.json',
      path: '/search', query: { q: 'praw oauth search', sort: 'new', type: 'link', limit: '25', raw_json: '1' }, count: 6,
      item: {
        id: 'reddit_3gpbiu', service: 'reddit', type: 'status',
        title: '[PRAW][OAuth2Util] Problem using get_banned() : raise Forbidden(_raw=response)',
        tags: [], url: 'https://www.reddit.com/r/redditdev/comments/3gpbiu/prawoauth2util_problem_using_get_banned_raise/',
        date: '2015-08-12T09:08:34.000Z',
        author: { name: 'dClauzel', username: 'dClauzel', userid: null, url: 'https://www.reddit.com/user/dClauzel/' },
        media: null,
        kudos: { score: 21, reddit_score: 0, reddit_comments: 21 },
      },
      // A relevance-ordered answer: the cursor is the newest by date, not the first.
      state: { before: 't3_4at068', since: 1458221634 },
    },
    {
      name: 'user: asks the submitted listing sorted by new',
      type: 'user', value: 'u/spez', file: 'user_submitted_new_cassette.json',
      path: '/user/spez/submitted', query: { sort: 'new', limit: '25', raw_json: '1' }, count: 10,
      item: {
        id: 'reddit_434h6c', service: 'reddit', type: 'status', title: 'Reddit in 2016',
        tags: [], url: 'https://www.reddit.com/r/announcements/comments/434h6c/reddit_in_2016/',
        date: '2016-01-28T18:05:43.000Z',
        author: { name: 'spez', username: 'spez', userid: null, url: 'https://www.reddit.com/user/spez/' },
        media: null,
        kudos: { score: 7850, reddit_score: 2079, reddit_comments: 5771 },
      },
      state: {},
    },
  ])('$name', async ({ type, value, file, path, query, count, item, state }) => {
    const [, listing] = cassette(file);
    api.respond = serve(() => reply(listing!));
    const result = await reddit.collect(input(type, value), {}, ctx());
    expect(api.requests.at(-1)!.path).toBe(path);
    expect(Object.fromEntries(api.requests.at(-1)!.query)).toEqual(query);
    expect(result.items).toHaveLength(count);
    // A self post's text is its selftext_html as Reddit gives it.
    expect(result.items[0]).toEqual({ ...item, text: listingOf(listing!).data.children[0]!.data.selftext_html });
    expect(result.state).toMatchObject(state);
  });

  it.each([
    {
      name: 'a gallery: its media in gallery order, captions as alt, the animated one as video', file: 'gallery_submission_cassette.json',
      item: {
        id: 'reddit_huw6vs', service: 'reddit', type: 'image', title: 'Test Title',
        text: '<a href="https://www.reddit.com/gallery/huw6vs" rel="nofollow noopener">https://www.reddit.com/gallery/huw6vs</a>',
        tags: [], url: 'https://www.reddit.com/r/<TEST_SUBREDDIT>/comments/huw6vs/test_title/',
        date: '2020-07-20T23:18:55.000Z',
        author: { name: '<USERNAME>', username: '<USERNAME>', userid: 't2_o77bz', url: 'https://www.reddit.com/user/%3CUSERNAME%3E/' },
        media: [
          { type: 'image', url: 'https://preview.redd.it/pb7qsvi6i3c51.png?width=128&format=png&auto=webp&s=7c2e610589cb5c8d60384b1d2a8eadc5c874d1d9', width: 128, height: 128 },
          { type: 'image', url: 'https://preview.redd.it/14wmudl6i3c51.jpg?width=128&format=pjpg&auto=webp&s=978f65bc49a7bc65ed5b0cb7493e7da85ba87909', width: 128, height: 128, alt: 'test.jpg' },
          { type: 'embed', url: 'https://i.redd.it/vkm62gm6i3c51.gif', embed: '<video controls src="https://preview.redd.it/vkm62gm6i3c51.gif?format=mp4&amp;s=262dd903019f57969cc9b13ab5b6810785c8d1a3"></video>' },
          { type: 'image', url: 'https://preview.redd.it/wka18en6i3c51.png?width=128&format=png&auto=webp&s=da421b79862a56e00187a720bf90693de71efbbe', width: 128, height: 128, alt: 'test.png' },
        ],
        kudos: { score: 1, reddit_score: 1, reddit_comments: 0 },
      },
    },
    {
      name: 'a Reddit-hosted video: its MP4 with the preview as poster and its duration', file: 'video_submission_cassette.json',
      item: {
        id: 'reddit_k5rsq3', service: 'reddit', type: 'video', title: 'Test Title 0',
        text: '<a href="https://v.redd.it/5ph4906syw261" rel="nofollow noopener">https://v.redd.it/5ph4906syw261</a>',
        tags: [], url: 'https://www.reddit.com/r/<TEST_SUBREDDIT>/comments/k5rsq3/test_title_0/',
        date: '2020-12-03T06:11:08.000Z',
        author: { name: '<USERNAME>', username: '<USERNAME>', userid: 't2_14g6bq9', url: 'https://www.reddit.com/user/%3CUSERNAME%3E/' },
        media: [{
          type: 'embed', url: 'https://www.reddit.com/r/<TEST_SUBREDDIT>/comments/k5rsq3/test_title_0/', duration: 13,
          embed: '<video controls src="https://v.redd.it/5ph4906syw261/DASH_240.mp4?source=fallback" poster="https://external-preview.redd.it/WHSrHbbmt2CT_VZkS9iPCynCpx97Mqh_VxXsVHKGStY.png?format=pjpg&amp;auto=webp&amp;s=2a988f95c46539a355552d92fa797c5b7265416e"></video>',
        }],
        kudos: { score: 1, reddit_score: 1, reddit_comments: 0 },
      },
    },
  ])('$name', ({ file, item }) => {
    const [post] = cassette(file);
    expect(postToItem(listingOf(post!).data.children[0]!.data)).toEqual(item);
  });

  // Hostile: a post without a usable id would be an item `reddit_` (every such post the same one).
  it('a post without an id, or with one that is no base-36 id, is not collected', async () => {
    const post = listingOf(beforePage!).data.children[0]!.data;
    const { id: _id, ...noId } = post;
    api.respond = serve(() => ({ body: { kind: 'Listing', data: { children: [
      { kind: 't3', data: noId }, { kind: 't3', data: { ...post, id: '' } }, { kind: 't3', data: { ...post, id: '../x' } }, { kind: 't3', data: { ...post, id: 42 } }, { kind: 't3', data: post },
    ] } } }));
    expect((await reddit.collect(input('subreddit', 'all'), {}, ctx())).items.map((i) => i.id)).toEqual([`reddit_${post.id as string}`]);
  });

  it('a deleted author is nobody; a removed post is not collected', async () => {
    const post = { ...listingOf(beforePage!).data.children[0]!.data, author: '[deleted]' };
    expect(postToItem(post).author).toEqual({ name: null, username: null, userid: null, url: null });
    api.respond = serve(() => ({ body: { kind: 'Listing', data: { children: [{ kind: 't3', data: { ...post, removed_by_category: 'moderator' } }, { kind: 't5', data: { id: 'x' } }] } } }));
    expect((await reddit.collect(input('subreddit', 'all'), {}, ctx())).items).toEqual([]);
  });
});

describe('reddit: failures', () => {
  const failing = (answer: FakeResponse) => serve(() => answer);
  it.each([
    { name: 'private subreddit (403, reason private)', answer: { status: 403, body: fixtureJson('reddit', 'private_403.json') }, message: 'reddit r/all is not readable: private (status 403)', permanent: true },
    { name: 'quarantined subreddit (403)', answer: reply(cassette('quarantined_403_cassette.json')[0]!), message: 'reddit r/all is not readable (status 403)', permanent: true },
    { name: 'not found (404)', answer: reply(cassette('not_found_404_cassette.json')[1]!), message: 'reddit r/all was not found (status 404)', permanent: true },
    { name: 'banned subreddit (404, reason banned)', answer: { status: 404, body: { reason: 'banned', message: 'Not Found', error: 404 } }, message: 'reddit r/all was not found: banned (status 404)', permanent: true },
    { name: 'an answer that is no listing', answer: { body: { kind: 't5', data: {} } }, message: 'reddit answered without a listing', permanent: false },
    { name: 'a 500', answer: { status: 500, body: 'oops' }, message: 'HTTP 500', permanent: false },
  ])('$name', async ({ answer, message, permanent }) => {
    api.respond = failing(answer);
    const error = await reddit.collect(input('subreddit', 'all'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ message, permanent });
  });

  it('a 429 waits for X-Ratelimit-Reset (seconds), and holds the app\'s next polls until then without asking', async () => {
    const [limited] = cassette('rate_limited_429_by_hand.json');
    api.respond = failing(reply(limited!));
    const services = settings();
    const error = await reddit.collect(input('subreddit', 'all'), {}, ctx(services)).catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'HTTP 429: Too Many Requests', permanent: false, retryAfterMs: 412_000 });
    const asked = api.requests.length;
    const held = await reddit.collect(input('user', 'spez'), {}, ctx(services, NOW + 400_000)).catch((e: unknown) => e);
    expect(held).toMatchObject({ permanent: false, retryAfterMs: 12_000 });
    expect(api.requests).toHaveLength(asked);
    // After the reset the app asks again.
    api.respond = serve(() => reply(newPage!));
    await expect(reddit.collect(input('subreddit', 'all'), {}, ctx(services, NOW + 412_000))).resolves.toMatchObject({ items: expect.any(Array) });
  });

  it('a success with X-Ratelimit-Remaining 0.0 sets the next poll at the reset, and holds the app until then', async () => {
    api.respond = serve(() => ({ ...reply(newPage!), headers: { 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '65', 'x-ratelimit-used': '100' } }));
    const services = settings();
    const result = await reddit.collect(input('subreddit', 'all'), {}, ctx(services));
    expect(result.items).toHaveLength(10);
    expect(result.nextRunAt).toBe(NOW + 65_000);
    const asked = api.requests.length;
    await expect(reddit.collect(input('search', 'cats'), {}, ctx(services, NOW + 1000))).rejects.toMatchObject({ retryAfterMs: 64_000, permanent: false });
    expect(api.requests).toHaveLength(asked);
  });

  // The page that spends the limit was read: its posts are kept, the walk stops there.
  it('a page of a later poll that spends the limit ends the poll with what it read, the next poll at the reset', async () => {
    const page = listingOf(beforePage!);
    api.respond = serve(() => ({ headers: { 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '65' }, body: { kind: 'Listing', data: { before: 't3_newer', children: page.data.children } } }));
    const result = await reddit.collect(input('subreddit', 'all'), { before: 't3_5jo13y', since: 1 }, ctx());
    expect(api.requests.filter((r) => !isToken(r))).toHaveLength(1);
    expect(result.items.map((i) => i.id)).toEqual(page.data.children.map((c) => `reddit_${c.data.id as string}`));
    expect(result.nextRunAt).toBe(NOW + 65_000);
    expect(result.state).toMatchObject({ before: 't3_5jo144' });
  });

  it('a success with requests left sets no next poll', async () => {
    const [gallery] = cassette('gallery_submission_cassette.json');
    api.respond = serve(() => ({ status: 200, headers: gallery!.headers, body: listingOf(gallery!) }));
    const result = await reddit.collect(input('subreddit', 'all'), {}, ctx());
    expect(result.nextRunAt).toBeUndefined();
  });
});

describe('reddit: lookup', () => {
  it('reads up to 100 posts by fullname; a removed one is gone', async () => {
    const posts = listingOf(beforePage!).data.children;
    api.respond = serve(() => ({ body: { kind: 'Listing', data: { children: [posts[0], { kind: 't3', data: { ...posts[1]!.data, removed_by_category: 'deleted' } }, { kind: 't3', data: { ...posts[2]!.data, removed_by_category: 'moderator' } }] } } }));
    const result = await reddit.lookup!.lookup(input('subreddit', 'all'), ['reddit_5jo144', 'reddit_5jo143', 'reddit_5jo141', 'twitter_1', 'reddit_../x'], ctx());
    expect(api.requests.at(-1)!.path).toBe('/api/info');
    expect(api.requests.at(-1)!.query.get('id')).toBe('t3_5jo144,t3_5jo143,t3_5jo141');
    expect([...result.items.keys()]).toEqual(['reddit_5jo144']);
    expect([...result.gone]).toEqual([['reddit_5jo143', 'deleted'], ['reddit_5jo141', 'gone']]);
  });

  it.each([
    [{}, undefined], [{ removed_by_category: null }, undefined], [{ removed_by_category: 'deleted' }, 'deleted'],
    [{ removed_by_category: 'author' }, 'deleted'], [{ removed_by_category: 'moderator' }, 'gone'], [{ removed_by_category: 'copyright_takedown' }, 'gone'],
  ])('removedReason(%j) → %j', (post, reason) => expect(removedReason(post)).toBe(reason));
});

describe('reddit: inputs', () => {
  const check = (type: string, value: string) => SERVICES.reddit.checkInput(value, { allowPrivateFetch: false, type });
  it.each([
    ['subreddit', 'pics'], ['subreddit', 'r/pics'], ['subreddit', '/r/pics/'], ['subreddit', 'https://www.reddit.com/r/pics/'],
    ['subreddit', 'https://old.reddit.com/r/AskReddit/new/'], ['subreddit', 'tv'],
    ['user', 'spez'], ['user', 'u/spez'], ['user', '/user/spez'], ['user', '@spez'], ['user', 'https://www.reddit.com/user/spez/submitted/'], ['user', 'Some-User_1'],
    ['search', 'praw oauth'], ['search', 'x'.repeat(512)],
  ])('accepts %s %j', (type, value) => expect(check(type, value)).toBeNull());

  // Hostile: another host, paths out of the listing, names Reddit refuses.
  it.each([
    ['subreddit', 'https://evil.example/r/pics'], ['subreddit', 'https://www.reddit.com.evil.example/r/pics'],
    ['subreddit', 'http://www.reddit.com/r/pics'], ['subreddit', 'https://www.reddit.com:8443/r/pics'], ['subreddit', 'https://user@www.reddit.com/r/pics'],
    ['subreddit', 'r/../../api/v1/me'], ['subreddit', '../api'], ['subreddit', 'r/pics/comments/abc'], ['subreddit', 'pics?limit=1000'],
    ['subreddit', 'pics+funny'], ['subreddit', 'p'], ['subreddit', 'x'.repeat(22)], ['subreddit', '%2e%2e'], ['subreddit', ''],
    ['subreddit', 'javascript:alert(1)'], ['subreddit', 'http://127.0.0.1/r/pics'],
    ['user', 'ab'], ['user', 'u/spez/comments'], ['user', 'spez/../x'], ['user', 'https://evil.example/user/spez'], ['user', 'sp ez'],
    ['search', ''], ['search', '   '], ['search', 'x'.repeat(513)], ['search', 'a\nb'],
  ])('refuses %s %j', (type, value) => expect(check(type, value)).toMatch(/^input must be/));

  it.each([
    ['subreddit', 'https://www.reddit.com/r/Pics/', 'pics'], ['subreddit', 'r/pics', 'pics'],
    ['user', 'u/Spez', 'spez'], ['search', ' Cats ', 'cats'],
  ])('%s %j is the source %j', (type, value, form) => expect(module.sourceForm(type, value)).toBe(form));
});
