import { describe, expect, it } from 'vitest';
import { useFakeApi, fixtureJson } from '../../../test/fake-api.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { postToItem, storedBlog, tumblr, tumblrLookupAnswer } from './connector.ts';

const api = useFakeApi();
const fetcher = api.fetcher;
const ctx = (env: Record<string, string> = { TUMBLR_API_KEY: 'consumer-key' }) =>
  ({ fetch: fetcher, now: 0, services: loadConfig({ TUMBLR_API_URL: `${api.base}/v2`, ...env }).services });
const input = (type: string, value: string): SourceInput => ({ id: 'a'.repeat(24), service: 'tumblr', type, input: value });
// The recording is a /likes response: the same post objects, wrapped here in the /posts envelope.
const posts = fixtureJson('tumblr', 'blog_likes_legacy_posts.json').liked_posts;

describe('tumblr', () => {
  it('maps legacy photo posts field by field and returns only newer posts next time', async () => {
    api.respond = () => ({ body: { meta: { status: 200, msg: 'OK' }, response: { posts } } });
    const first = await tumblr.collect(input('user', 'sashalre'), {}, ctx());
    expect(api.requests[0]!.path).toBe('/v2/blog/sashalre.tumblr.com/posts');
    expect(api.requests[0]!.query.get('api_key')).toBe('consumer-key');
    expect(first.items).toHaveLength(posts.length);
    expect(first.items[0]).toEqual({
      id: 'tumblr_131232761410', service: 'tumblr', type: 'image',
      title: "$4. Can't beat it. 3rd in a week! #wendys  (at Wendy's)",
      text: '<p>$4. Can&rsquo;t beat it. 3rd in a week! #wendys  (at Wendy&rsquo;s)</p>',
      tags: ['wendys'], url: 'http://sashalre.tumblr.com/post/131232761410/4-cant-beat-it-3rd-in-a-week-wendys-at',
      date: '2015-10-15T18:34:06.000Z',
      author: { name: 'sashalre', username: 'sashalre', userid: null, url: 'https://sashalre.tumblr.com/' },
      media: [{ type: 'image', url: 'https://68.media.tumblr.com/bdc6999a1dffbf5148cffc9d33b32724/tumblr_nw9y8u9ge61stwux3o1_1280.jpg', width: 1080, height: 1080 }],
      kudos: { score: 7, tumblr_notes: 7 },
    });
    expect(first.state).toEqual({ since: 1445175093 });
    const second = await tumblr.collect(input('user', 'sashalre'), first.state, ctx());
    expect(second.items).toEqual([]);
  });

  it('reads tagged posts and keeps big ids exact', async () => {
    api.respond = () => ({ body: `{"meta":{"status":200},"response":[{"id":9007199254740993,"type":"text","timestamp":1,"body":"<b>x</b>","blog_name":"b"}]}` });
    const { items } = await tumblr.collect(input('tag', '#wendys'), {}, ctx());
    expect(api.requests[0]!.path).toBe('/v2/tagged');
    expect(api.requests[0]!.query.get('tag')).toBe('wendys');
    expect(items[0]).toMatchObject({ id: 'tumblr_9007199254740993', type: 'status', text: '<b>x</b>' });
  });

  it.each([
    [429, { 'retry-after': '60' }, false, 60_000],
    [401, {}, true, undefined],
    [404, {}, true, undefined],
    [500, {}, false, undefined],
  ])('HTTP %i', async (status, headers, permanent, retryAfterMs) => {
    api.respond = () => ({ status, headers, body: { meta: { status, msg: 'Limit Exceeded' } } });
    const error = await tumblr.collect(input('user', 'x'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('reports malformed JSON and a missing key', async () => {
    api.respond = () => ({ body: 'nope' });
    await expect(tumblr.collect(input('user', 'x'), {}, ctx())).rejects.toThrow(/^malformed JSON/);
    await expect(tumblr.collect(input('user', 'x'), {}, ctx({}))).rejects.toThrow('tumblr is not configured: set TUMBLR_API_KEY');
  });
});

describe("tumblr: a connected account's OAuth 2.0 token", () => {
  it('sends the token as Authorization: Bearer instead of api_key', async () => {
    api.respond = () => ({ body: { meta: { status: 200, msg: 'OK' }, response: [] } });
    await tumblr.collect(input('tag', 'wendys'), {}, ctx({ TUMBLR_ACCESS_TOKEN: 'tumblr-oauth2-token' }));
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.headers.authorization).toBe('Bearer tumblr-oauth2-token');
    expect(api.requests[0]!.query.get('api_key')).toBeNull();
  });
});

// Re-verification lookup (docs/services.md#re-verification). Payloads hand-made in the envelope
// Tumblr documents (https://www.tumblr.com/docs/en/api/v2#response-format: `meta.status`,
// `meta.msg`, "Not Found" for a 404), with a recorded post for the found one.
describe('tumblr lookup', () => {
  const post = posts[0] as { id: number; id_string?: string };
  const asked = `tumblr_${post.id_string ?? post.id}`;
  const notFound = { meta: { status: 404, msg: 'Not Found' }, response: [], errors: [{ title: 'Not Found', code: 0, detail: 'Not Found' }] };

  it.each([
    { name: 'the post found', answer: { body: { meta: { status: 200, msg: 'OK' }, response: { posts: [post] } } }, items: [asked], gone: [] },
    { name: 'an answer without the post', answer: { body: { meta: { status: 200, msg: 'OK' }, response: { posts: [] } } }, items: [], gone: [] },
    { name: 'another post than the one asked', answer: { body: { meta: { status: 200 }, response: { posts: [{ ...post, id: 1, id_string: '1' }] } } }, items: [], gone: [] },
    { name: 'a 404 "Not Found"', answer: { notFound: true as const }, items: [], gone: [[asked, 'deleted']] },
  ])('maps $name', ({ answer, items, gone }) => {
    const result = tumblrLookupAnswer(asked, answer);
    expect([...result.items.keys()]).toEqual(items);
    expect([...result.gone]).toEqual(gone);
  });

  it('asks the user input\'s blog for the post by id; a 404 "Not Found" → deleted', async () => {
    api.respond = () => ({ status: 404, body: notFound });
    const result = await tumblr.lookup!.lookup(input('user', 'sashalre'), [asked], ctx());
    expect(api.requests[0]!.path).toBe('/v2/blog/sashalre.tumblr.com/posts');
    expect(Object.fromEntries(api.requests[0]!.query)).toEqual({ api_key: 'consumer-key', id: asked.slice('tumblr_'.length) });
    expect([...result.gone]).toEqual([[asked, 'deleted']]);
    expect(result.items.size).toBe(0);
  });

  it('reads a found post as a poll would', async () => {
    api.respond = () => ({ body: { meta: { status: 200, msg: 'OK' }, response: { posts: [post] } } });
    const result = await tumblr.lookup!.lookup(input('user', 'sashalre'), [asked], ctx());
    expect(result.items.get(asked)).toEqual((await tumblr.collect(input('user', 'sashalre'), {}, ctx())).items[0]);
    expect(result.gone.size).toBe(0);
  });

  // Hostile: nothing but Tumblr's "Not Found" 404 removes anything.
  it.each([
    { name: 'a 429 with Retry-After', reply: { status: 429, headers: { 'retry-after': '120' }, body: { meta: { status: 429, msg: 'Limit Exceeded' } } }, permanent: false, retryAfterMs: 120_000 },
    { name: 'a 500', reply: { status: 500, body: 'oops' }, permanent: false, retryAfterMs: undefined },
    { name: 'a 401', reply: { status: 401, body: { meta: { status: 401, msg: 'Unauthorized' } } }, permanent: true, retryAfterMs: undefined },
    { name: 'a 404 without Tumblr\'s meta (a proxy\'s page)', reply: { status: 404, body: '<html>not here</html>' }, permanent: true, retryAfterMs: undefined },
  ])('$name throws and removes nothing', async ({ reply, permanent, retryAfterMs }) => {
    api.respond = () => reply;
    const error = await tumblr.lookup!.lookup(input('user', 'sashalre'), [asked], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it.each([
    { name: 'an id of another service', type: 'user', ids: ['twitter_123'] },
    { name: 'a tag input\'s item without its stored item (its id does not name its blog)', type: 'tag', ids: [asked] },
  ])('asks nothing for $name', async ({ type, ids }) => {
    api.respond = () => ({ status: 404, body: notFound });
    const result = await tumblr.lookup!.lookup(input(type, 'sashalre'), ids, ctx());
    expect(api.requests).toHaveLength(0);
    expect(result.gone.size + result.items.size).toBe(0);
  });

  // A tag input's items: the blog comes from the stored item (docs/services.md#re-verification).
  const postItem = () => postToItem(post as unknown as Parameters<typeof postToItem>[0]);
  const by = (username: string | null) => ({ name: null, username, userid: null, url: null });
  it.each([
    { name: 'a post URL on <blog>.tumblr.com', url: 'https://Sashalre.tumblr.com/post/123/a-slug', author: by(null), blog: 'sashalre' },
    { name: 'a post URL on www.tumblr.com/<blog>/<id>', url: 'https://www.tumblr.com/sashalre/123', author: by(null), blog: 'sashalre' },
    { name: 'the author\'s username when the URL names no post', url: 'https://sashalre.tumblr.com/', author: by('other-blog'), blog: 'other-blog' },
    // Hostile: a URL of another host never picks the blog.
    { name: 'a URL of another host', url: 'https://evil.example/post/123', author: by(null), blog: undefined },
    { name: 'a look-alike host', url: 'https://sashalre.tumblr.com.evil.example/post/123', author: by(null), blog: undefined },
    { name: 'a custom domain', url: 'https://blog.example.com/post/123', author: by(null), blog: undefined },
    { name: 'a URL of another post', url: 'https://sashalre.tumblr.com/post/999', author: by(null), blog: undefined },
    { name: 'a URL with a port', url: 'https://sashalre.tumblr.com:8443/post/123', author: by(null), blog: undefined },
    { name: 'www as a blog', url: 'https://www.tumblr.com/post/123', author: by(null), blog: undefined },
    { name: 'a username that is no blog name', url: 'https://evil.example/post/123', author: by('a.b/../x'), blog: undefined },
    { name: 'not a URL', url: 'not a url', author: by(null), blog: undefined },
  ])('takes a stored item\'s blog from $name', ({ url, author, blog }) => {
    expect(storedBlog('tumblr_123', { url, author })).toBe(blog);
  });

  it('asks the blog of a tag input\'s stored item; a 404 "Not Found" → deleted', async () => {
    api.respond = () => ({ status: 404, body: notFound });
    const stored = new Map([[asked, { ...postItem(), url: `https://sashalre.tumblr.com/post/${asked.slice('tumblr_'.length)}/slug` }]]);
    const result = await tumblr.lookup!.lookup(input('tag', 'cats'), [asked], ctx(), stored);
    expect(api.requests[0]!.path).toBe('/v2/blog/sashalre.tumblr.com/posts');
    expect(api.requests[0]!.query.get('id')).toBe(asked.slice('tumblr_'.length));
    expect([...result.gone]).toEqual([[asked, 'deleted']]);
  });

  it('asks nothing for a tag input\'s stored item whose URL is of another host and whose author names no blog', async () => {
    api.respond = () => ({ status: 404, body: notFound });
    const stored = new Map([[asked, { ...postItem(), url: `https://evil.example/post/${asked.slice('tumblr_'.length)}`, author: by(null) }]]);
    const result = await tumblr.lookup!.lookup(input('tag', 'cats'), [asked], ctx(), stored);
    expect(api.requests).toHaveLength(0);
    expect(result.gone.size + result.items.size).toBe(0);
  });
});
