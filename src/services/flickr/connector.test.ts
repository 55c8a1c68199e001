import { describe, expect, it } from 'vitest';
import { failureCases, fixtureJson, useSourceServer } from '../../../test/source-server.ts';
import { loadConfig } from '../../config.ts';
import { SourceError, type SourceInput } from '../connector.ts';
import { flickr, flickrItem, flickrLookupAnswer } from './connector.ts';

const getInfo = fixtureJson('flickr/photos_getInfo.json') as { photo: Record<string, unknown> };
const getPhotos = fixtureJson('flickr/people_getPhotos.json');
const NOW = Date.parse('2030-01-01T00:00:00Z');

// A flickr.photos.search page with extras, built from the documented shape (docs/services.md#flickr:
// extras as flat fields, `dateupload` and `views` as strings, `tags` space-separated) with the
// values of the recorded getInfo photo; no recorded search page with extras was saved.
const searchPhoto = {
  id: '26069027966', owner: '35034346050@N01', secret: 'abcd123456', server: '1576', farm: 2, title: 'Dore Abbey',
  ispublic: 1, isfriend: 0, isfamily: 0, description: { _content: 'Some <b>test HTML</b>.' }, dateupload: '1459181105',
  datetaken: '2016-03-17 16:25:15', datetakengranularity: 0, ownername: 'Phil Gyford', views: '55', tags: 'abbeydore doreabbey uk',
  latitude: '51.967930', longitude: '-2.894419', accuracy: '16', media: 'photo', pathalias: 'philgyford',
  url_l: 'https://live.staticflickr.com/1576/26069027966_abcd123456_b.jpg', height_l: 768, width_l: 1024, count_faves: '3', count_comments: '2',
};
const search = (photos: unknown[], page = 1, pages = 1) => ({ photos: { page, pages: String(pages), perpage: 100, total: String(photos.length), photo: photos }, stat: 'ok' });

// The public Atom feed, built from the documented feed format (no recorded feed was saved).
const atom = `<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:flickr="urn:flickr:user" xmlns:media="http://search.yahoo.com/mrss/">
  <title>Recent Uploads tagged abbey</title>
  <link rel="self" href="https://www.flickr.com/services/feeds/photos_public.gne?tags=abbey&amp;format=atom" />
  <id>tag:flickr.com,2005:/photos/public/tagged/all/abbey</id>
  <updated>2016-03-28T16:05:05Z</updated>
  <entry>
    <title>Dore Abbey</title>
    <link rel="alternate" type="text/html" href="https://www.flickr.com/photos/philgyford/26069027966/"/>
    <id>tag:flickr.com,2005:/photo/26069027966</id>
    <published>2016-03-28T16:05:05Z</published>
    <updated>2016-03-28T16:05:05Z</updated>
    <flickr:date_taken>2016-03-17T16:25:15-08:00</flickr:date_taken>
    <content type="html">&lt;p&gt;Some &lt;b&gt;test HTML&lt;/b&gt;.&lt;/p&gt;</content>
    <author><name>Phil Gyford</name><uri>https://www.flickr.com/people/philgyford/</uri><flickr:nsid>35034346050@N01</flickr:nsid></author>
    <link rel="enclosure" type="image/jpeg" href="https://live.staticflickr.com/1576/26069027966_abcd123456_b.jpg" />
    <category term="abbey" scheme="https://www.flickr.com/photos/tags/" />
    <category term="uk" scheme="https://www.flickr.com/photos/tags/" />
  </entry>
</feed>`;

const server = useSourceServer();
const fetcher = server.fetcher;
const ctx = (env: Record<string, string> = { FLICKR_API_KEY: 'flickr-key' }) => ({
  fetch: fetcher,
  services: loadConfig({ FLICKR_API_URL: `${server.base}/services/rest`, FLICKR_FEED_URL: `${server.base}/feed.gne`, ...env }).services,
  now: NOW,
});
const input = (type: string, value: string): SourceInput => ({ id: 'i1', service: 'flickr', type, input: value });


describe('flickr', () => {
  it('maps the recorded getInfo photo field by field', () => {
    expect(flickrItem(getInfo.photo, NOW)).toEqual({
      id: 'flickr_26069027966',
      service: 'flickr',
      type: 'image',
      title: 'Dore Abbey',
      text: 'Some <b>test HTML</b>.\n\nAnd another paragraph.',
      tags: ['Abbey Dore', 'Dore Abbey', 'tester:foo=bar', 'UK', 'abbey', 'church', 'tester'],
      url: 'https://www.flickr.com/photos/philgyford/26069027966/',
      date: '2016-03-28T16:05:05.000Z', // dates.posted 1459181105 (taken is local time without a zone)
      author: { name: 'Phil Gyford', username: 'philgyford', userid: '35034346050@N01', url: 'https://www.flickr.com/photos/philgyford/' },
      media: [{ type: 'image', url: 'https://live.staticflickr.com/1576/26069027966_abcd123456_b.jpg' }],
      kudos: { score: 2, flickr_views: 55, flickr_comments: 2 },
      location: { latitude: 51.96793, longitude: -2.894419, name: 'Abbey Dore' },
    });
  });

  it('reads a user by NSID with people.getPhotos (recorded envelope: string pages and total)', async () => {
    server.handle(() => ({ body: getPhotos }));
    const { items, state } = await flickr.collect(input('user', '35034346050@N01'), {}, ctx());
    const req = server.requests[0]!;
    expect(req.parsed.pathname).toBe('/services/rest/');
    expect(Object.fromEntries(req.parsed.searchParams)).toMatchObject({
      method: 'flickr.people.getPhotos', api_key: 'flickr-key', user_id: '35034346050@N01', format: 'json', nojsoncallback: '1', page: '1' });
    expect(req.parsed.searchParams.get('extras')).toContain('date_upload');
    expect(items.map((i) => [i.id, i.title, i.url, i.author.userid])).toEqual([
      ['flickr_25822158530', 'Public footpath', 'https://www.flickr.com/photos/35034346050@N01/25822158530/', '35034346050@N01'],
      ['flickr_26069027966', 'Dore Abbey', 'https://www.flickr.com/photos/35034346050@N01/26069027966/', '35034346050@N01'],
      ['flickr_25822102530', 'Mary mowing the lawn', 'https://www.flickr.com/photos/35034346050@N01/25822102530/', '35034346050@N01'],
    ]);
    expect(items[1]!.media).toEqual([{ type: 'image', url: 'https://live.staticflickr.com/1576/26069027966_abcd123456_b.jpg' }]);
    expect(state).toMatchObject({ nsid: '35034346050@N01', nsidOf: '35034346050@N01' });
  });

  it('searches a tag with extras, then asks only for newer uploads', async () => {
    server.handle(() => ({ body: search([searchPhoto]) }));
    const first = await flickr.collect(input('tag', '#abbey'), {}, ctx());
    expect(Object.fromEntries(server.requests[0]!.parsed.searchParams)).toMatchObject({
      method: 'flickr.photos.search', tags: 'abbey', sort: 'date-posted-desc' });
    expect(first.items[0]).toMatchObject({
      id: 'flickr_26069027966', date: '2016-03-28T16:05:05.000Z', tags: ['abbeydore', 'doreabbey', 'uk'],
      author: { name: 'Phil Gyford', username: 'philgyford', userid: '35034346050@N01', url: 'https://www.flickr.com/photos/philgyford/' },
      media: [{ type: 'image', url: searchPhoto.url_l, width: 1024, height: 768 }],
      kudos: { score: 3 + 2, flickr_views: 55, flickr_faves: 3, flickr_comments: 2 },
      location: { latitude: 51.96793, longitude: -2.894419 },
    });
    server.requests.length = 0;
    const newer = { ...searchPhoto, id: '26069027999', dateupload: '1459190000' };
    server.handle(() => ({ body: search([newer, searchPhoto]) }));
    const second = await flickr.collect(input('tag', 'abbey'), first.state, ctx());
    expect(server.requests[0]!.parsed.searchParams.get('min_upload_date')).toBe('1459181105');
    expect(second.items.map((i) => i.id)).toEqual(['flickr_26069027999']);
  });

  it('resolves a path alias once and keeps the NSID', async () => {
    server.handle((req) => (req.parsed.searchParams.get('method') === 'flickr.urls.lookupUser'
      ? { body: { user: { id: '35034346050@N01', username: { _content: 'Phil Gyford' } }, stat: 'ok' } }
      : { body: getPhotos }));
    const { state } = await flickr.collect(input('user', 'philgyford'), {}, ctx());
    expect(server.requests[0]!.parsed.searchParams.get('url')).toBe('https://www.flickr.com/photos/philgyford/');
    server.requests.length = 0;
    await flickr.collect(input('user', 'philgyford'), state, ctx());
    expect(server.requests.map((r) => r.parsed.searchParams.get('method'))).toEqual(['flickr.people.getPhotos']);
  });

  it('uses the keyless public feed for a tag without a key', async () => {
    server.handle(() => ({ body: atom, headers: { 'content-type': 'application/atom+xml', etag: '"f1"' } }));
    const { items, state } = await flickr.collect(input('tag', 'abbey'), {}, ctx({}));
    expect(server.requests[0]!.url).toBe('/feed.gne?tags=abbey&tagmode=any&format=atom');
    expect(items).toEqual([expect.objectContaining({
      id: 'flickr_26069027966', service: 'flickr', type: 'image', title: 'Dore Abbey', text: '<p>Some <b>test HTML</b>.</p>',
      tags: ['abbey', 'uk'], url: 'https://www.flickr.com/photos/philgyford/26069027966/', date: '2016-03-28T16:05:05.000Z',
      author: { name: 'Phil Gyford', username: 'philgyford', userid: null, url: 'https://www.flickr.com/people/philgyford/' },
      media: [{ type: 'image', url: 'https://live.staticflickr.com/1576/26069027966_abcd123456_b.jpg' }],
      kudos: { score: 0 } })]);
    server.handle(() => ({ status: 304 }));
    await flickr.collect(input('tag', 'abbey'), state, ctx({}));
    expect(server.requests[1]!.headers['if-none-match']).toBe('"f1"');
  });

  it('names FLICKR_API_KEY for a user input the feed cannot serve', async () => {
    await expect(flickr.collect(input('user', 'philgyford'), {}, ctx({}))).rejects.toMatchObject({
      permanent: true, message: expect.stringContaining('FLICKR_API_KEY') });
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    [100, 'Invalid API Key (Key has invalid format)', true],
    [105, 'Service currently unavailable', false],
  ])('reads error %i in a 200 body (permanent: %s)', async (code, message, permanent) => {
    server.handle(() => ({ body: { stat: 'fail', code, message } }));
    await expect(flickr.collect(input('tag', 'x'), {}, ctx())).rejects.toMatchObject({ permanent, message: `flickr error ${code}: ${message}` });
  });

  it.each(failureCases(NOW))('$name', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await flickr.collect(input('tag', 'x'), {}, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });
});

// Re-verification lookup (docs/services.md#re-verification): flickr.photos.getInfo, one photo a
// request. Failures hand-made in the shape Flickr documents
// (https://www.flickr.com/services/api/flickr.photos.getInfo.html: `{"stat":"fail","code":1,
// "message":"Photo not found"}`); the found photo is the recorded getInfo answer.
describe('flickr lookup', () => {
  const asked = 'flickr_26069027966';
  const notFound = { stat: 'fail', code: 1, message: 'Photo "26069027966" not found (invalid ID)' };

  it.each([
    // Found: gone only, no item (getInfo lacks a poll's sizes; an update would lose them).
    { name: 'a found photo', body: { ...getInfo, stat: 'ok' }, gone: [] },
    { name: 'code 1 "Photo not found"', body: notFound, gone: [[asked, 'deleted']] },
  ])('maps $name', ({ body, gone }) => {
    const result = flickrLookupAnswer(asked, body);
    expect(result.items.size).toBe(0);
    expect([...result.gone]).toEqual(gone);
  });

  it.each([
    { name: 'code 2 (permission denied)', body: { stat: 'fail', code: 2, message: 'Permission denied' }, permanent: true },
    { name: 'code 100 (invalid key)', body: { stat: 'fail', code: 100, message: 'Invalid API Key' }, permanent: true },
    { name: 'code 105 (service unavailable)', body: { stat: 'fail', code: 105, message: 'Service currently unavailable' }, permanent: false },
    { name: 'a fail without a code', body: { stat: 'fail' }, permanent: true },
  ])('$name throws and removes nothing', ({ body, permanent }) => {
    const thrown = (() => {
      try {
        return flickrLookupAnswer(asked, body);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(SourceError);
    expect(thrown).toMatchObject({ permanent });
  });

  it('asks photos.getInfo for the photo; code 1 → deleted', async () => {
    server.handle(() => ({ body: notFound }));
    const result = await flickr.lookup!.lookup(input('user', '35034346050@N01'), [asked], ctx());
    expect(Object.fromEntries(server.requests[0]!.parsed.searchParams)).toMatchObject({ method: 'flickr.photos.getInfo', photo_id: '26069027966', api_key: 'flickr-key' });
    expect([...result.gone]).toEqual([[asked, 'deleted']]);
  });

  // Hostile: HTTP failures and rate limits throw (the runner removes nothing and retries).
  it.each(failureCases(NOW))('$name throws and removes nothing', async ({ reply, permanent, retryAfterMs }) => {
    server.handle(() => reply);
    const error = await flickr.lookup!.lookup(input('tag', 'x'), [asked], ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ permanent, retryAfterMs });
  });

  it('asks nothing for an id of another service, and needs the key', async () => {
    server.handle(() => ({ body: notFound }));
    const result = await flickr.lookup!.lookup(input('tag', 'x'), ['tumblr_26069027966'], ctx());
    expect(server.requests).toHaveLength(0);
    expect(result.gone.size + result.items.size).toBe(0);
    await expect(flickr.lookup!.lookup(input('tag', 'x'), [asked], ctx({}))).rejects.toMatchObject({ permanent: true, message: expect.stringContaining('FLICKR_API_KEY') });
    expect(server.requests).toHaveLength(0);
  });
});
