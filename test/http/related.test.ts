/**
 * Related content and articles (issue 36 points 2–3; docs/api.md#related-content) through HTTP on
 * a real database, articles served by a real local server: extraction with Readability, TF-IDF
 * key terms matched through the full-text index, robots.txt respected, the failure classes
 * (404, not HTML, too large, no text, a redirect to a private address), one fetch per address
 * (cached, concurrent first requests shared), JSONP, the per-contract cap on new fetches, the
 * articles listing and its management, items pinned for an article first; hostile: another
 * contract's items and unpublished ones never appear, a q that is no http(s) URL → 400.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, isAllowedAddress } from '../../src/collect/fetch.ts';
import { createArticleReader } from '../../src/queue/related/article.ts';
import { ApiError } from '../../src/errors.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createContract } from '../../src/store/contracts.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { type Reply, startSourceServer, type SourceServer } from '../source-server.ts';

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/sport">Sport</a></nav><article><h1>${title}</h1>${body}</article><footer>Copyright Example News</footer></body></html>`;

const SOLAR = page(
  'Rooftop solar panels power a village through winter',
  `<p>The village of Kettlewick installed rooftop solar panels on every school and farm this spring, and the panels kept the lights on through the darkest winter weeks.</p>
   <p>Engineer Marta Olsen said the solar batteries stored enough energy for three nights. Neighbours now share surplus solar power with the grid. #solarpower</p>
   <p>Other villages in the valley plan their own solar panels next year, with batteries from the same cooperative.</p>`,
);
const HTML = { 'content-type': 'text/html; charset=utf-8' };

let server: SourceServer;
const pages: Record<string, () => Reply> = {
  '/robots.txt': () => ({ body: 'User-agent: *\nDisallow: /private/\n' }),
  '/news/solar.html': () => ({ headers: HTML, body: SOLAR }),
  '/news/solar-2.html': () => ({ headers: HTML, body: SOLAR }),
  '/news/solar-3.html': () => ({ headers: HTML, body: SOLAR }),
  '/private/solar.html': () => ({ headers: HTML, body: SOLAR }),
  '/data.json': () => ({ headers: { 'content-type': 'application/json' }, body: '{"solar": true}' }),
  '/empty.html': () => ({ headers: HTML, body: '<!doctype html><html><head><title>Nothing</title></head><body><nav>Home</nav></body></html>' }),
  '/huge.html': () => ({ headers: HTML, body: page('Huge', `<p>${'solar panels and batteries '.repeat(120_000)}</p>`) }),
  '/broken.html': () => ({ status: 500, headers: HTML, body: 'oops' }),
};
beforeAll(async () => {
  server = await startSourceServer((req) => pages[req.parsed.pathname]?.() ?? { status: 404, headers: HTML, body: 'not here' });
});
afterAll(async () => server.close());

const fetchesOf = (path: string) => server.requests.filter((r) => r.parsed.pathname === path).length;

const DAY = 86_400_000;
async function setup(env: Record<string, string> = {}) {
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', ...env });
  const tenant = await buildTenant(ctx.db);
  const at = (days: number) => new Date(Date.now() - days * DAY).toISOString();
  await seedItems(ctx.db, tenant, [
    buildItem({ id: 'rss_solar1', title: 'Solar panels on the school roof', text: 'Kettlewick school runs on solar panels and batteries', date: at(1) }),
    buildItem({ id: 'rss_solar2', title: 'Cooperative sells solar batteries', text: 'The valley cooperative offers batteries for rooftop solar', date: at(2) }),
    buildItem({ id: 'rss_solar3', title: 'Marta Olsen on winter energy', text: 'Solar power through the winter, says the engineer', date: at(3) }),
    buildItem({ id: 'rss_foot1', title: 'Football cup final tonight', text: 'The cup final kicks off at eight', date: at(1) }),
    buildItem({ id: 'rss_foot2', title: 'Striker signs for the club', text: 'A new striker for the football club', date: at(1) }),
    buildItem({ id: 'rss_cake', title: 'Baking the perfect sponge cake', text: 'Flour, eggs and sugar', date: at(1) }),
  ]);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_held', title: 'Solar panels held back', text: 'Unpublished solar panels batteries', date: at(1) })], 'unpublished');
  // Another contract with items that match the article perfectly.
  const other = await createContract(ctx.db, 'Rival Paper', 'test');
  const otherCollection = await createCollection(ctx.db, other.id, { name: 'Rival', dedupe: 'off' }, 'test');
  await seedItems(ctx.db, { contract: other, collection: otherCollection }, [
    buildItem({ id: 'rss_rival', title: 'Rooftop solar panels village winter Kettlewick', text: 'Solar panels batteries Marta Olsen #solarpower', date: at(0) }),
  ]);
  const slug = tenant.contract.slug;
  const related = (url: string, extra = '') => ctx.app.inject({ method: 'GET', url: `/v1/related/${slug}?q=${encodeURIComponent(url)}${extra}` });
  return { ...ctx, tenant, slug, related };
}

describe('GET /v1/related/{contract}', () => {
  it('reads the article and answers the published items that match it, best first, in the content item shape', async () => {
    const { related, tenant } = await setup();
    const url = `${server.base}/news/solar.html`;
    const res = await related(url);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    const items = res.json() as { id: string; service: string; title: string }[];
    const ids = items.map((item) => item.id);
    expect(ids.slice(0, 3).sort()).toEqual(['rss_solar1', 'rss_solar2', 'rss_solar3']);
    // Hostile: the other contract's item and the unpublished one never appear; unrelated ones neither.
    expect(ids).not.toContain('rss_rival');
    expect(ids).not.toContain('rss_held');
    expect(ids).not.toContain('rss_cake');
    expect(items[0]).toMatchObject({ service: 'rss' });
    expect(tenant.contract.slug).toBeTruthy();
  });

  it('fetches an article once: a second call and concurrent first calls are answered from the one computation', async () => {
    const { related } = await setup();
    const url = `${server.base}/news/solar-2.html`;
    const before = fetchesOf('/news/solar-2.html');
    const [a, b] = await Promise.all([related(url), related(url)]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.body).toBe(b.body);
    const c = await related(url);
    expect(c.body).toBe(a.body);
    expect(fetchesOf('/news/solar-2.html') - before).toBe(1);
  });

  it('answers JSONP with callback', async () => {
    const { related } = await setup();
    const res = await related(`${server.base}/news/solar.html`, '&callback=show.related');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/javascript/);
    expect(res.body).toMatch(/^\/\*\*\/show\.related\(\[.*\]\);$/s);
  });

  it.each([
    ['a page robots.txt disallows', '/private/solar.html', 422, 'UnprocessableError', /robots\.txt/],
    ['a page that does not exist', '/missing.html', 404, 'NotFoundError', /does not exist/],
    ['a page that is not HTML', '/data.json', 422, 'UnprocessableError', /not an HTML page/],
    ['a page with no text', '/empty.html', 422, 'UnprocessableError', /no readable text/],
    ['a page larger than the size limit', '/huge.html', 422, 'UnprocessableError', /larger/],
    ['a page whose server fails', '/broken.html', 502, 'UpstreamError', /500/],
  ])('answers the error object for %s', async (_name, path, status, name, message) => {
    const { related } = await setup();
    const body = expectError(await related(`${server.base}${path}`), status, { name, code: status === 404 ? 4001 : status === 502 ? 5021 : 4221, propertyName: 'q' });
    expect(String(body.errors[0]!.message)).toMatch(message);
  });

  it('does not fetch a page robots.txt disallows', async () => {
    const { related } = await setup();
    await related(`${server.base}/private/solar.html`);
    expect(fetchesOf('/private/solar.html')).toBe(0);
  });

  it.each(['not a url', 'ftp://example.com/a', 'javascript:alert(1)', 'https://user:pw@example.com/a', '/news/solar.html'])('refuses q %s with 400 naming q', async (q) => {
    const { related } = await setup();
    expectError(await related(q), 400, { name: 'ValidationError', code: 1005, propertyName: 'q' });
  });

  it('answers 401 for an unknown contract', async () => {
    const { app } = await setup();
    expectError(await app.inject({ method: 'GET', url: `/v1/related/nobody?q=${encodeURIComponent(`${server.base}/news/solar.html`)}` }), 401, { name: 'AuthenticationError', code: 2001 });
  });

  it('caps the new articles fetched per contract per minute (429 naming q), while kept answers still come', async () => {
    const { related } = await setup({ RELATED_FETCHES_PER_MINUTE: '2' });
    expect((await related(`${server.base}/news/solar.html`)).statusCode).toBe(200);
    expect((await related(`${server.base}/news/solar-2.html`)).statusCode).toBe(200);
    const refused = await related(`${server.base}/news/solar-3.html`);
    expectError(refused, 429, { name: 'RateLimitError', code: 4291, propertyName: 'q' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await related(`${server.base}/news/solar.html`)).statusCode).toBe(200);
  });

  it('puts items a moderator pinned for the article first; unpinning takes them out', async () => {
    const { related, app, tenant, slug } = await setup();
    const url = `${server.base}/news/solar.html#comments`;
    const moderate = (body: object) =>
      app.inject({ method: 'PATCH', url: `/v1/queue/${slug}?q=${tenant.collection.slug}&id=rss_cake&access_token=${tenant.token}`, payload: body });
    expect((await related(url)).json().map((i: { id: string }) => i.id)).not.toContain('rss_cake');
    const pinned = await moderate({ article: url });
    expect(pinned.statusCode, pinned.body).toBe(200);
    expect(pinned.json()).toMatchObject({ id: 'rss_cake', state: 'published' });
    expect((await related(url)).json()[0].id).toBe('rss_cake');
    expect((await moderate({ article: url, pinned: false })).statusCode).toBe(200);
    expect((await related(url)).json().map((i: { id: string }) => i.id)).not.toContain('rss_cake');
    // Hostile: the article pin goes with one item and nothing else; a bad address names article.
    expectError(await moderate({ article: url, state: 'unpublished' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    expectError(await moderate({ article: 'nope' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'article' });
  });
});

describe('the related widget page (GET /v1/publication/{contract}?related=…)', () => {
  it('renders the related items with the collection settings and no live updates; an unreadable article renders an empty wall', async () => {
    const { app, slug, tenant } = await setup();
    const wall = (related: string) => app.inject({ method: 'GET', url: `/v1/publication/${slug}?q=${tenant.collection.slug}&layout=vertical&related=${encodeURIComponent(related)}` });
    const res = await wall(`${server.base}/news/solar.html`);
    expect(res.statusCode, res.body).toBe(200);
    const ids = [...res.body.matchAll(/data-id="([^"]+)"/g)].map((m) => m[1]).sort();
    expect(ids).toEqual(['rss_solar1', 'rss_solar2', 'rss_solar3']);
    expect(res.body).toContain(`data-related="${server.base}/news/solar.html"`);
    expect(res.body).not.toContain('rel="next"');
    const empty = await wall(`${server.base}/missing.html`);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).not.toMatch(/data-id="/);
    // Hostile: a related that is no http(s) URL names the parameter.
    expectError(await wall('javascript:alert(1)'), 400, { name: 'ValidationError', code: 1005, propertyName: 'related' });
  });
});

describe('GET /v1/articles/{contract} and /collection/articles', () => {
  it('lists the articles asked about, newest first, with their related endpoint, title, first words and count', async () => {
    const { related, app, slug, config } = await setup();
    await related(`${server.base}/news/solar.html`);
    await related(`${server.base}/missing.html`);
    const res = await app.inject({ method: 'GET', url: `/v1/articles/${slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toMatch(/^public/);
    const articles = res.json();
    expect(articles.map((a: { article: string }) => a.article)).toEqual([`${server.base}/missing.html`, `${server.base}/news/solar.html`]);
    expect(articles[1]).toMatchObject({
      url: `${config.queueUrl}/v1/related/${slug}?q=${encodeURIComponent(`${server.base}/news/solar.html`)}`,
      title: 'Rooftop solar panels power a village through winter',
      service: 'article',
      count: 3,
    });
    expect(articles[1].text).toMatch(/^The village of Kettlewick/);
    expect(Date.parse(articles[1].date)).toBeGreaterThan(0);
    expect((await app.inject({ method: 'GET', url: `/v1/articles/${slug}?count=1` })).json()).toHaveLength(1);
    expect((await app.inject({ method: 'GET', url: `/v1/articles/${slug}?count=1&callback=cb` })).body).toMatch(/^\/\*\*\/cb\(/);
  });

  it('adds an article ahead of its first visit and removes it; hostile: another contract cannot', async () => {
    const { app, slug, tenant, db } = await setup();
    const add = (body: object, token = tenant.token) => app.inject({ method: 'POST', url: `/collection/articles?access_token=${token}`, payload: body });
    const created = await add({ contractId: tenant.contract.id, url: 'https://news.example/a' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ article: 'https://news.example/a', title: null, count: 0, service: 'article' });
    expect((await add({ contractId: tenant.contract.id, url: 'https://news.example/a' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/v1/articles/${slug}` })).json().map((a: { id: string }) => a.id)).toEqual([created.json().id]);
    const listed = await app.inject({ method: 'GET', url: `/collection/articles?contract_id=${tenant.contract.id}&access_token=${tenant.token}` });
    expect(listed.json()).toHaveLength(1);
    expectError(await add({ contractId: tenant.contract.id, url: 'file:///etc/passwd' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'url' });
    // Hostile: another contract's client can neither add to this contract nor remove its article.
    const rival = await buildTenant(db, 'Rival');
    expectError(await add({ contractId: tenant.contract.id, url: 'https://news.example/b' }, rival.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contractId' });
    const remove = (token: string) => app.inject({ method: 'DELETE', url: `/collection/articles/${created.json().id}?access_token=${token}` });
    expectError(await remove(rival.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect((await remove(tenant.token)).statusCode).toBe(204);
    expect((await app.inject({ method: 'GET', url: `/v1/articles/${slug}` })).json()).toEqual([]);
    expectError(await remove(tenant.token), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
  });
});

describe('the article reader and the outbound guard', () => {
  let redirecting: Server;
  // The guard as in production, except that the one article server (127.0.0.1) is let through, standing in for a public site.
  const fetcher = createFetcher({ allowPrivate: false, isAllowed: (address) => address === '127.0.0.1' || isAllowedAddress(address) });
  beforeAll(async () => {
    redirecting = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/ok.html') return void res.writeHead(200, HTML).end(SOLAR);
      res.writeHead(302, { location: 'http://127.0.0.2/latest/meta-data/' }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await fetcher.close();
    redirecting.closeAllConnections();
    await new Promise<void>((resolve) => redirecting.close(() => resolve()));
  });

  it('reads an allowed article (the control), and refuses one redirecting to a private address with 422', async () => {
    const reader = createArticleReader(fetcher);
    const port = (redirecting.address() as AddressInfo).port;
    const article = await reader.read(new URL(`http://127.0.0.1:${port}/ok.html`));
    expect(article.title).toBe('Rooftop solar panels power a village through winter');
    expect(article.text).toMatch(/Marta Olsen/);
    expect(article.text).not.toMatch(/Copyright/);
    const refused = await reader.read(new URL(`http://127.0.0.1:${port}/moved.html`)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(422);
    expect((refused as ApiError).entries[0]).toMatchObject({ name: 'UnprocessableError', propertyName: 'q' });
    expect((refused as ApiError).message).toMatch(/non-public address/);
  });
});
