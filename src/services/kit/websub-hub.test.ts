/** The pure parts of WebSub (hub.ts): Link headers, discovery, YouTube topics, signatures. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseFeed } from './feed.ts';
import { discoverTarget, linkHeaderLinks, verifySignature, youtubeChannelId, youtubeTopic } from './websub-hub.ts';

const BASE = 'https://example.org/feed.xml';
const none = { hubs: [], self: null };

describe('linkHeaderLinks', () => {
  it.each([
    ['<https://hub.example/>; rel="hub", <https://example.org/topic>; rel="self"', { hubs: ['https://hub.example/'], self: 'https://example.org/topic' }],
    ['<https://hub.example/>; rel=hub', { hubs: ['https://hub.example/'], self: null }],
    ['<https://a.example/>; rel="hub", <https://b.example/>; rel="hub"', { hubs: ['https://a.example/', 'https://b.example/'], self: null }],
    ['</hub>; rel="hub self"', { hubs: ['https://example.org/hub'], self: 'https://example.org/hub' }],
    ['<https://example.org/next>; rel="next"; title="a, b"', none],
    ['<https://hub.example/>; REL="HUB"', { hubs: ['https://hub.example/'], self: null }],
    ['garbage', none],
    [undefined, none],
  ])('%s', (header, expected) => {
    expect(linkHeaderLinks(header, BASE)).toEqual(expected);
  });
});

describe('discoverTarget', () => {
  it.each([
    ['the header wins', { hubs: ['https://h1/'], self: 'https://t1/' }, { hubs: ['https://h2/'], self: 'https://t2/' }, { hub: 'https://h1/', topic: 'https://t1/' }],
    ['the header hub with the document self', { hubs: ['https://h1/'], self: null }, { hubs: [], self: 'https://t2/' }, { hub: 'https://h1/', topic: 'https://t2/' }],
    ['the document', none, { hubs: ['https://h2/'], self: 'https://t2/' }, { hub: 'https://h2/', topic: 'https://t2/' }],
    ['no self: the fetched URL', none, { hubs: ['https://h2/'], self: null }, { hub: 'https://h2/', topic: BASE }],
    ['no hub', { hubs: [], self: 'https://t1/' }, { hubs: [], self: 'https://t2/' }, undefined],
    ['not http', none, { hubs: ['ftp://h/'], self: null }, undefined],
  ])('%s', (_name, header, document, expected) => {
    expect(discoverTarget(header, document, BASE)).toEqual(expected);
  });

  it('reads the links of Atom, RSS (atom:link) and JSON Feed documents', () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    const atom = '<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><link rel="hub" href="https://hub.example/"/><link rel="self" href="https://example.org/atom"/></feed>';
    expect(parseFeed(bytes(atom), undefined, BASE).links).toEqual({ hubs: ['https://hub.example/'], self: 'https://example.org/atom' });
    const rss = '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>T</title><atom:link rel="hub" href="https://hub.example/"/><atom:link rel="self" href="https://example.org/rss"/><item><title>A</title></item></channel></rss>';
    expect(parseFeed(bytes(rss), undefined, BASE).links).toEqual({ hubs: ['https://hub.example/'], self: 'https://example.org/rss' });
    const json = JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', feed_url: 'https://example.org/json', hubs: [{ type: 'WebSub', url: 'https://hub.example/' }, { type: 'rssCloud', url: 'https://cloud/' }], items: [] });
    expect(parseFeed(bytes(json), undefined, BASE).links).toEqual({ hubs: ['https://hub.example/'], self: 'https://example.org/json' });
    expect(parseFeed(bytes('<rss version="2.0"><channel><title>T</title></channel></rss>'), undefined, BASE).links).toEqual(none);
  });
});

describe('YouTube', () => {
  it.each([
    ['UC_x5XG1OV2P6uZZ5FSM9Ttw', {}, 'UC_x5XG1OV2P6uZZ5FSM9Ttw'],
    ['@GoogleDevelopers', { playlist: 'UU_x5XG1OV2P6uZZ5FSM9Ttw' }, 'UC_x5XG1OV2P6uZZ5FSM9Ttw'],
    ['@GoogleDevelopers', {}, undefined],
    ['UCshort', {}, undefined],
  ])('%s %j', (input, state, expected) => {
    expect(youtubeChannelId(input, state)).toBe(expected);
  });

  it('names the topic YouTube documents', () => {
    expect(youtubeTopic('UC_x5XG1OV2P6uZZ5FSM9Ttw')).toBe('https://www.youtube.com/xml/feeds/videos.xml?channel_id=UC_x5XG1OV2P6uZZ5FSM9Ttw');
  });
});

describe('verifySignature', () => {
  const body = new TextEncoder().encode('<feed/>');
  const sign = (method: string, secret = 's3cret') => `${method}=${createHmac(method, secret).update(body).digest('hex')}`;
  it.each([
    ['sha256', sign('sha256'), true],
    ['sha1', sign('sha1'), true],
    ['sha384', sign('sha384'), true],
    ['sha512', sign('sha512'), true],
    ['upper-case hex', sign('sha256').toUpperCase().replace('SHA256', 'sha256'), true],
    ['another secret', sign('sha256', 'other'), false],
    ['md5 (not in the Recommendation)', sign('md5'), false],
    ['truncated', sign('sha256').slice(0, -2), false],
    ['method mislabelled', sign('sha1').replace('sha1', 'sha256'), false],
    ['no method', sign('sha256').slice('sha256='.length), false],
    ['absent', undefined, false],
    ['empty', '', false],
  ])('%s', (_name, header, expected) => {
    expect(verifySignature(header, 's3cret', body)).toBe(expected);
  });
});
