/**
 * The LinkedIn connector (docs/services.md#linkedin) against a local server answering with the
 * recorded payloads (test/fixtures/linkedin/, written after the Posts and Images API references):
 * the request and its headers, little text, the mapping field by field, images through the Images
 * API, paging by start/count, and LinkedIn's failures.
 */
import { describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer, type Recorded } from '../source-server.ts';
import { loadConfig } from '../../src/config.ts';
import { SourceError, type SourceInput } from '../../src/services/connector.ts';
import { LINKEDIN_VERSION, linkedin, littleText, untilMidnightUtc } from '../../src/services/linkedin/connector.ts';
import { row } from '../../src/services/linkedin/row.ts';

const NOW = Date.parse('2030-01-01T06:00:00Z');
const posts = fixtureJson('linkedin/posts_by_author_p1.json') as { paging: unknown; elements: Array<Record<string, unknown>> };
const images = fixtureJson('linkedin/images_batch_get.json');
const server = useSourceServer(1500);
const ctx = (env: Record<string, string> = {}) => ({
  fetch: server.fetcher,
  services: loadConfig({ LINKEDIN_API_URL: `${server.base}/rest`, LINKEDIN_ACCESS_TOKEN: 'li-token', ...env }).services,
  now: NOW,
});
const input = (value = 'urn:li:organization:2414183'): SourceInput => ({ id: 'i1', service: 'linkedin', type: 'organization', input: value });
const answer = (postsBody: unknown) => (req: Recorded) => ({ body: req.parsed.pathname === '/rest/images' ? images : postsBody });

describe('linkedin little text', () => {
  it.each([
    ['plain', 'plain', []],
    ['\\(escaped\\) \\#not \\@a \\[tag\\] \\{x\\} \\* \\_ \\~ \\\\', '(escaped) #not @a [tag] {x} * _ ~ \\', []],
    ['Hi @[Acme \\(EU\\)](urn:li:organization:1)!', 'Hi Acme (EU)!', []],
    ['{hashtag|\\#|Events} and {hashtag|#|AI} {hashtag|\\#|Events}', '#Events and #AI #Events', ['Events', 'AI']],
  ])('%s', (text, plain, tags) => {
    expect(littleText(text)).toEqual({ text: plain, tags });
  });
});

describe('linkedin', () => {
  it('asks for the organization posts with the version and Rest.li headers, then the images in one batch', async () => {
    server.handle(answer(posts));
    await linkedin.collect(input('2414183'), {}, ctx());
    const [list, batch] = server.requests;
    expect(list!.parsed.pathname).toBe('/rest/posts');
    expect(list!.url).toContain('author=urn%3Ali%3Aorganization%3A2414183');
    expect(Object.fromEntries(list!.parsed.searchParams)).toEqual({ author: 'urn:li:organization:2414183', q: 'author', sortBy: 'LAST_MODIFIED', count: '50', start: '0' });
    expect(list!.headers.authorization).toBe('Bearer li-token');
    expect(list!.headers['linkedin-version']).toBe(LINKEDIN_VERSION);
    expect(list!.headers['x-restli-protocol-version']).toBe('2.0.0');
    expect(batch!.parsed.pathname).toBe('/rest/images');
    expect(batch!.url).toBe('/rest/images?ids=List(urn%3Ali%3Aimage%3AC4E10AQFoyyAjHPMQuQ,urn%3Ali%3Aimage%3AC4E10AQArticleThumb,urn%3Ali%3Aimage%3AC4D22AQMulti1,urn%3Ali%3Aimage%3AC4D22AQMulti2)');
    expect(server.requests).toHaveLength(2);
  });

  it('maps the recorded posts field by field; a draft is left out', async () => {
    server.handle(answer(posts));
    const { items, state } = await linkedin.collect(input(), {}, ctx());
    expect(items.map((i) => [i.id, i.type])).toEqual([
      ['linkedin_share_6969368474853031936', 'image'],
      ['linkedin_ugcPost_6969300000000000001', 'link'],
      ['linkedin_share_6969200000000000002', 'image'],
      ['linkedin_share_6969100000000000003', 'video'],
    ]);
    const author = { name: null, username: null, userid: '2414183', url: 'https://www.linkedin.com/company/2414183/' };
    expect(items[0]).toEqual({
      id: 'linkedin_share_6969368474853031936',
      service: 'linkedin',
      type: 'image',
      text: 'Meet us at booth 42 with LinkedIn! <a href="https://www.linkedin.com/feed/hashtag/events/" rel="nofollow noopener">#Events</a> '
        + '<a href="https://www.linkedin.com/feed/hashtag/devday/" rel="nofollow noopener">#DevDay</a> (doors open at 9) &lt;b&gt;bold?&lt;/b&gt;',
      tags: ['Events', 'DevDay'],
      url: 'https://www.linkedin.com/feed/update/urn:li:share:6969368474853031936/',
      date: '2022-08-29T17:48:31.213Z',
      author,
      media: [{ type: 'image', url: 'https://media.licdn.com/dms/image/C4E10AQFoyyAjHPMQuQ/image-shrink_1280/0/1661795311000?e=1662400111&v=beta&t=abc', alt: 'The team at the booth' }],
      kudos: { score: 0 },
    });
    expect(items[1]).toMatchObject({
      title: 'We launched',
      text: 'Read about the launch: <a href="https://www.example.com/blog/launch" rel="nofollow noopener">https://www.example.com/blog/launch</a>',
      media: [{ type: 'image', url: expect.stringContaining('C4E10AQArticleThumb'), alt: 'Launch banner' }],
      author,
    });
    expect(items[2]!.media).toEqual([
      { type: 'image', url: expect.stringContaining('C4D22AQMulti1'), alt: 'first' },
      { type: 'image', url: expect.stringContaining('C4D22AQMulti2'), alt: 'second' },
    ]);
    expect(items[3]).toMatchObject({ title: 'title of the video', media: null, text: 'Sample video Post' });
    expect(state).toEqual({ latest: '2022-08-29T17:48:31.246Z', ids: ['urn:li:share:6969368474853031936'] });
  });

  it('reads the images of many posts in batches of 50 URNs', async () => {
    const many = { paging: { start: 0, count: 50 }, elements: Array.from({ length: 6 }, (_, n) => ({
      ...posts.elements[2], id: `urn:li:share:${2000 + n}`,
      content: { multiImage: { images: Array.from({ length: 10 }, (_, k) => ({ id: `urn:li:image:P${n}I${k}`, altText: `${n}/${k}` })) } },
    })) };
    server.handle((req) => (req.parsed.pathname === '/rest/images'
      ? { body: { results: Object.fromEntries(req.parsed.searchParams.get('ids')!.replace(/^List\(|\)$/g, '').split(',').map((urn) => [urn, { downloadUrl: `https://media.licdn.com/${urn}` }])) } }
      : { body: many }));
    const { items } = await linkedin.collect(input(), {}, ctx());
    const batches = server.requests.filter((r) => r.parsed.pathname === '/rest/images').map((r) => r.parsed.searchParams.get('ids')!.split(',').length);
    expect(batches).toEqual([50, 10]);
    expect(items.flatMap((i) => i.media ?? [])).toHaveLength(60);
    expect(items[5]!.media![9]).toEqual({ type: 'image', url: 'https://media.licdn.com/urn:li:image:P5I9', alt: '5/9' });
  });

  // Hostile: an answer naming thousands of images would make thousands of Images API calls in one poll.
  it('reads at most the 20 images a multi-image post can hold (Posts API), however many one names', async () => {
    const crowded = { paging: { start: 0, count: 50 }, elements: [{
      ...posts.elements[2], id: 'urn:li:share:3000',
      content: { multiImage: { images: Array.from({ length: 1000 }, (_, k) => ({ id: `urn:li:image:C${k}` })) } },
    }] };
    server.handle((req) => (req.parsed.pathname === '/rest/images'
      ? { body: { results: Object.fromEntries(req.parsed.searchParams.get('ids')!.replace(/^List\(|\)$/g, '').split(',').map((urn) => [decodeURIComponent(urn), { downloadUrl: `https://media.licdn.com/${urn}` }])) } }
      : { body: crowded }));
    const { items } = await linkedin.collect(input(), {}, ctx());
    expect(server.requests.filter((r) => r.parsed.pathname === '/rest/images')).toHaveLength(1);
    expect(items[0]!.media).toHaveLength(20);
  });

  it('pages on by start while every post is new, and reads nothing new after', async () => {
    const full = (start: number) => ({ paging: { start, count: 50, total: 53 }, elements: Array.from({ length: start === 0 ? 50 : 3 }, (_, n) => ({
      ...posts.elements[3], id: `urn:li:share:${1000 + start + n}`, lastModifiedAt: 1_700_000_000_000 - (start + n) * 1000, publishedAt: 1_700_000_000_000 - (start + n) * 1000,
    })) });
    server.handle((req) => ({ body: full(Number(req.parsed.searchParams.get('start'))) }));
    const first = await linkedin.collect(input(), { latest: '2000-01-01T00:00:00.000Z', ids: [] }, ctx());
    expect(server.requests.map((r) => r.parsed.searchParams.get('start'))).toEqual(['0', '50']);
    expect(first.items).toHaveLength(53);
    server.requests.length = 0;
    const second = await linkedin.collect(input(), first.state, ctx());
    expect(second.items).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['an invalid or expired token (401, serviceErrorCode 65600)', 401, 'error_401_invalid_token.json', {}, { permanent: true, retryAfterMs: undefined }, 'Invalid access token (serviceErrorCode 65600)'],
    ['not an administrator of the organization (403)', 403, 'error_403_access_denied.json', {}, { permanent: true, retryAfterMs: undefined }, 'ACCESS_DENIED'],
    ['an unknown organization (404)', 404, 'error_404_not_found.json', {}, { permanent: true, retryAfterMs: undefined }, 'not found'],
    ['the daily limit (429): until midnight UTC', 429, 'error_429_throttled.json', {}, { permanent: false, retryAfterMs: 18 * 3600_000 }, 'DAY limit'],
    ['a 429 with Retry-After', 429, 'error_429_throttled.json', { 'retry-after': '30' }, { permanent: false, retryAfterMs: 30_000 }, 'DAY limit'],
  ] as const)('%s', async (_name, status, file, headers, expected, text) => {
    const body = fixtureJson(`linkedin/${file}`);
    server.handle(() => ({ status, headers, body }));
    const error = await linkedin.collect(input(), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject(expected);
    if (text !== 'ACCESS_DENIED') expect((error as Error).message).toContain(text);
    else expect((error as Error).message).toContain('Not enough permissions');
  });

  it('counts the daily reset from now', () => {
    expect(untilMidnightUtc(Date.parse('2030-01-01T23:59:00Z'))).toBe(60_000);
    expect(untilMidnightUtc(Date.parse('2030-01-01T00:00:00Z'))).toBe(86_400_000);
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await linkedin.collect(input(), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('names the missing credential and calls nothing', async () => {
    const error = await linkedin.collect(input(), {}, { ...ctx(), services: loadConfig({ LINKEDIN_API_URL: server.base }).services }).catch((e: unknown) => e);
    expect(error).toMatchObject({ permanent: true, message: 'linkedin is not configured: set LINKEDIN_ACCESS_TOKEN' });
    expect(server.requests).toHaveLength(0);
  });

  it.each([['2414183', null], ['urn:li:organization:2414183', null], ['urn:li:person:2414183', 'must be'], ['acme', 'must be'], ['https://www.linkedin.com/company/acme', 'must be'], ['1'.repeat(20), 'must be']])(
    'checks the input %s',
    (value, problem) => {
      const result = row.checkInput(value);
      if (problem === null) expect(result).toBeNull();
      else expect(result).toContain(problem);
    },
  );
});
