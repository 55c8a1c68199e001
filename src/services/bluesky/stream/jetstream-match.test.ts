import { describe, expect, it } from 'vitest';
import { compileMatcher, parseQuery, type MatchPost } from './jetstream-match.ts';

const post = (text: string, extra: Partial<MatchPost> = {}): MatchPost => ({ did: 'did:plc:someone', text, tags: [], reply: false, ...extra });

describe('compileMatcher', () => {
  it.each([
    ['one word, any case, punctuation around', 'sluice', post('The SLUICE, opened!'), true],
    ['whole words only', 'sluice', post('sluices and sluicegates'), false],
    ['all words, any order', 'gate sluice', post('sluice and its gate'), true],
    ['a word missing', 'gate sluice', post('sluice only'), false],
    ['a quoted phrase in order', '"sluice gate"', post('the sluice gate'), true],
    ['a quoted phrase out of order', '"sluice gate"', post('gate of the sluice'), false],
    ['inner punctuation is a phrase', 'node.js', post('written in Node.js today'), true],
    ['inner punctuation is a phrase (apart)', 'node.js', post('node runs js'), false],
    ['accents kept, width folded (NFKC)', 'café', post('ＣＡＦÉ time'), true],
    ['a tag matches a tag facet, any case', '#WallOfNews', post('see', { tags: ['wallofnews'] }), true],
    ['a tag is not a text word', '#wall', post('#wall written, not tagged'), false],
    ['tag and word together', '#news sluice', post('sluice', { tags: ['News'] }), true],
    ['replies match keywords', 'sluice', post('sluice', { reply: true }), true],
  ])('%s', (_name, query, p, expected) => {
    expect(compileMatcher([{ id: 'a', type: 'keyword', query }]).match(p)).toEqual(expected ? ['a'] : []);
  });

  it('matches users by DID, without replies, and every input at once, each once', () => {
    const matcher = compileMatcher([
      { id: 'u', type: 'user', query: 'did:plc:alice' },
      { id: 'k1', type: 'keyword', query: 'news' },
      { id: 'k2', type: 'keyword', query: 'news news' },
      { id: 'k3', type: 'keyword', query: 'other' },
      { id: 'empty', type: 'keyword', query: '"" ,,' },
    ]);
    expect(matcher.ids).toEqual(new Set(['u', 'k1', 'k2', 'k3']));
    expect(matcher.match(post('news, news', { did: 'did:plc:alice' })).sort()).toEqual(['k1', 'k2', 'u']);
    expect(matcher.match(post('news', { did: 'did:plc:alice', reply: true })).sort()).toEqual(['k1', 'k2']);
    expect(matcher.match(post('nothing', { did: 'did:plc:bob' }))).toEqual([]);
  });

  it('parses queries into words, phrases and tags', () => {
    expect(parseQuery('Sluice "Gate opens" #Tag node.js #')).toEqual([{ words: ['sluice'] }, { words: ['gate', 'opens'] }, { tag: 'tag' }, { words: ['node', 'js'] }]);
  });
});
