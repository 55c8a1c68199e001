import { describe, expect, it } from 'vitest';
import { compile, evaluate, FilterError, governingFilter, type FilterChain, type FilterList, type FilterSet, type Rule } from './engine.ts';
import { BUILT_IN_LISTS, builtInList, builtInListId } from './builtin-lists.ts';
import { MAX_COMPILED_SIZE, MAX_FIELD_CHARS } from './limits.ts';
import { parsePattern, PatternError, patternSet } from './patterns.ts';
import { entryProblems, setRuleProblems } from './rules.ts';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

const base = {
  id: 'rss_1',
  service: 'rss',
  type: 'link',
  title: 'Weekly News',
  text: 'Buy VIAGRA now, casino  bonus inside',
  tags: ['News', 'sport'],
  url: null,
  date: '2026-11-22T10:00:00.000Z',
  author: { name: 'Ann Smith', username: 'Spammer', userid: '7', url: null },
  media: [
    { type: 'image', url: 'https://example.org/i.png', width: 640 },
    { type: 'embed', embed: '<iframe></iframe>', duration: 30 },
  ],
  kudos: { score: 12, twitter_likes: 3 },
  language: 'en',
};

const lists: FilterList[] = [
  { id: 'spammers', type: 'strings', entries: ['spammer', 'bot_42'], active: true },
  { id: 'badwords', type: 'patterns', entries: ['/viagra/i', '/casino\\s+bonus/', '/^free/m'], active: true },
  { id: 'vip', type: 'strings', entries: ['alice'], active: true },
  { id: 'off-strings', type: 'strings', entries: ['spammer'], active: false },
  { id: 'off-patterns', type: 'patterns', entries: ['/viagra/i'], active: false },
];

function set(rules: Rule[], extra: Partial<FilterSet> = {}): FilterSet {
  return { id: 'set-1', name: 'spam', rules, active: true, ...extra };
}

function decide(filter: FilterSet, item: object = base) {
  return evaluate(compile({ kind: 'set', set: filter }, lists), item, NOW);
}

type Row = [operator: string, field: string, value: unknown, expected: boolean, item?: object];

// Each row runs twice: as written (expected) and with `not: true` (the opposite).
const rows: Row[] = [
  ['equals', 'language', 'EN', true],
  ['equals', 'language', 'de', false],
  ['equals', 'kudos.score', 12, true],
  ['equals', 'kudos.score', 13, false],
  ['equals', 'author.userid', 7, true],
  ['equals', 'user', 'spammer', true],
  ['equals', 'tags', 'SPORT', true],
  ['equals', 'media.type', 'embed', true],
  ['equals', 'location.name', 'Paris', false],
  ['equals', 'url', 'x', false],
  ['gt', 'kudos.score', 11, true],
  ['gt', 'kudos.score', 12, false],
  ['gte', 'kudos.score', 12, true],
  ['lt', 'kudos.score', 13, true],
  ['lt', 'kudos.score', 12, false],
  ['lte', 'kudos.score', 12, true],
  ['gt', 'media.width', 600, true],
  ['lt', 'media.duration', 10, false],
  ['gt', 'title', 0, false],
  ['gt', 'kudos.facebook_likes', 0, false],
  ['gt', 'date', '2026-11-22T09:00:00Z', true],
  ['lt', 'date', '2026-11-22T09:00:00Z', false],
  ['lte', 'date', '2026-11-22T10:00:00.000Z', true],
  ['gte', 'date', '2026-11-23', false],
  ['gt', 'date', '2026-11-22T09:30', true],
  ['lt', 'date', '2026-11-22T11:00+02:00', false],
  ['pattern', 'text', '/viagra/i', true],
  ['pattern', 'text', '/viagra/', false],
  ['pattern', 'title', '/^weekly/i', true],
  ['pattern', 'tags', '/^spo/', true],
  ['pattern', 'user', '/^spam/i', true],
  ['pattern', 'language', '/^de$/', false],
  ['pattern', 'location.name', '/./', false],
  ['pattern', 'text', '/a.b/s', true, { ...base, text: 'a\nb' }],
  ['pattern', 'text', '/a.b/', false, { ...base, text: 'a\nb' }],
  ['pattern', 'text', '/^b$/m', true, { ...base, text: 'a\nb' }],
  ['pattern', 'text', '/^b$/', false, { ...base, text: 'a\nb' }],
  ['pattern', 'text', '/(a+)+$/', false, { ...base, text: `${'a'.repeat(60)}!` }],
  ['pattern', 'text', '/(a+)+$/', true, { ...base, text: 'a'.repeat(60) }],
  ['in', 'user', ['SPAMMER', 'x'], true],
  ['in', 'user', ['nobody'], false],
  ['in', 'tags', ['sport'], true],
  ['in', 'kudos.score', [12, 13], true],
  ['in', 'location.name', ['Paris'], false],
  ['in', 'user', { listId: 'spammers' }, true],
  ['in', 'author.name', { listId: 'spammers' }, false],
  ['in', 'tags', { listId: 'spammers' }, false],
  ['patternin', 'text', ['/nothing/', '/casino\\s+bonus/'], true],
  ['patternin', 'text', ['/x/i', '/Y/'], false, { ...base, text: 'y' }],
  ['patternin', 'text', ['/^b$/m', '/z/'], true, { ...base, text: 'a\nb' }],
  ['patternin', 'text', ['/^b$/', '/z/'], false, { ...base, text: 'a\nb' }],
  ['patternin', 'text', { listId: 'badwords' }, true],
  ['patternin', 'title', { listId: 'badwords' }, false],
  ['patternin', 'tags', { listId: 'badwords' }, false],
  ['patternin', 'text', { listId: 'badwords' }, true, { ...base, text: 'hello\nfree stuff' }],
  ['patternin', 'location.name', { listId: 'badwords' }, false],
  ['patternin', 'text', ['/(a+)+$/'], false, { ...base, text: `${'a'.repeat(60)}!` }],
  ['datediff', 'date', 3600, true],
  ['datediff', 'date', 7200, false],
  ['datediff', 'date', 7199, true],
  ['datediff', 'title', 0, false],
  ['exists', 'language', undefined, true],
  ['exists', 'media', undefined, true],
  ['exists', 'location', undefined, false],
  ['exists', 'url', undefined, false],
  ['exists', 'title', undefined, false, { ...base, title: '' }],
  ['exists', 'tags', undefined, false, { ...base, tags: [] }],
  ['exists', 'kudos', undefined, true],
];

function rule(operator: string, field: string, value: unknown, not: boolean): Rule {
  const isList = typeof value === 'object' && value !== null && 'listId' in value;
  return { operator, field, not, ...(isList ? (value as { listId: string }) : value === undefined ? {} : { value }) };
}

describe('operators', () => {
  it.each(rows)('%s %s %j is %s', (operator, field, value, expected, item = base) => {
    expect(decide(set([rule(operator, field, value, false)]), item).accepted).toBe(!expected);
    expect(decide(set([rule(operator, field, value, true)]), item).accepted).toBe(expected);
  });

  it.each([
    ['in', 'user', 'off-strings'],
    ['patternin', 'text', 'off-patterns'],
  ])('a %s rule on an inactive list counts as absent, with and without not', (operator, field, listId) => {
    for (const not of [false, true]) {
      expect(decide(set([{ operator, field, listId, not }])).accepted).toBe(true);
      expect(decide(set([{ operator, field, listId, not }], { or: true })).accepted).toBe(true);
    }
    const other = { operator: 'equals', field: 'language', value: 'en', not: false };
    expect(decide(set([{ operator, field, listId, not: true }, other], { or: true }))).toMatchObject({ accepted: false, rule: 1 });
  });
});

describe('sets', () => {
  const de = { operator: 'equals', field: 'language', value: 'de', not: false };
  const en = { operator: 'equals', field: 'language', value: 'en', not: false };
  const viagra = { operator: 'pattern', field: 'text', value: '/viagra/i', not: false };
  const sport = { operator: 'in', field: 'tags', value: ['sport'], not: false };

  it.each([
    ['no rules', set([]), { accepted: true }],
    ['no rules, or', set([], { or: true }), { accepted: true }],
    ['inactive set', set([viagra], { active: false }), { accepted: true }],
    ['or false: first true rule rejects', set([de, viagra, sport]), { accepted: false, set: { id: 'set-1', name: 'spam' }, rule: 1, reason: 'rule 1: text matches /viagra/i' }],
    ['or false: no rule true', set([de]), { accepted: true }],
    ['or true: one rule false', set([viagra, de], { or: true }), { accepted: true }],
    [
      'or true: every rule true',
      set([viagra, sport, en], { or: true }),
      { accepted: false, set: { id: 'set-1', name: 'spam' }, rule: 2, reason: 'every rule is true: rule 0: text matches /viagra/i; rule 1: tags "sport" is in ["sport"]; rule 2: language "en" equals "en"' },
    ],
    ['preCondition true: rules apply', set([viagra], { preCondition: en }), { accepted: false, rule: 0 }],
    ['preCondition false: set skipped', set([viagra], { preCondition: de }), { accepted: true }],
    ['preCondition with not', set([viagra], { preCondition: { ...de, not: true } }), { accepted: false, rule: 0 }],
    ['preCondition on a missing field', set([viagra], { preCondition: { operator: 'equals', field: 'location.name', value: 'x', not: false } }), { accepted: true }],
    ['preCondition on an inactive list counts as absent', set([viagra], { preCondition: { operator: 'in', field: 'user', listId: 'off-strings', not: true } }), { accepted: false, rule: 0 }],
    ['rule indexes keep their place when a rule is absent', set([{ operator: 'in', field: 'user', listId: 'off-strings', not: false }, viagra]), { accepted: false, rule: 1 }],
  ])('%s', (_name, filter, expected) => {
    const decision = decide(filter);
    expect(decision).toMatchObject(expected);
    if (decision.accepted) expect(decision).toEqual({ accepted: true });
  });

  it('or true with not: rules are alternatives, one of which an item must match', () => {
    const allowed = set(
      [
        { operator: 'in', field: 'user', listId: 'vip', not: true },
        { operator: 'equals', field: 'language', value: 'fr', not: true },
      ],
      { or: true },
    );
    expect(decide(allowed).accepted).toBe(false);
    expect(decide(allowed, { ...base, language: 'FR' }).accepted).toBe(true);
    expect(decide(allowed, { ...base, author: { ...base.author, username: 'Alice' } }).accepted).toBe(true);
  });
});

describe('reasons', () => {
  it.each<[Rule, string]>([
    [{ operator: 'in', field: 'user', listId: 'spammers', not: false }, 'rule 0: user "Spammer" is in list spammers'],
    [{ operator: 'patternin', field: 'text', listId: 'badwords', not: false }, 'rule 0: text matches /viagra/i of list badwords'],
    [{ operator: 'patternin', field: 'text', value: ['/x/', '/casino\\s+bonus/'], not: false }, 'rule 0: text matches /casino\\s+bonus/'],
    [{ operator: 'patternin', field: 'title', listId: 'badwords', not: true }, 'rule 0: title matches no pattern of list badwords'],
    [{ operator: 'equals', field: 'language', value: 'de', not: true }, 'rule 0: language does not equal "de"'],
    [{ operator: 'equals', field: 'location.name', value: 'x', not: true }, 'rule 0: location.name is missing'],
    [{ operator: 'gt', field: 'kudos.score', value: 10, not: false }, 'rule 0: kudos.score 12 is greater than 10'],
    [{ operator: 'lte', field: 'kudos.score', value: 5, not: true }, 'rule 0: kudos.score is not at most 5'],
    [{ operator: 'lt', field: 'date', value: '2026-12-01', not: false }, 'rule 0: date "2026-11-22T10:00:00.000Z" is before "2026-12-01"'],
    [{ operator: 'datediff', field: 'date', value: 3600, not: false }, 'rule 0: date "2026-11-22T10:00:00.000Z" is more than 3600 s before the time of evaluation'],
    [{ operator: 'exists', field: 'language', not: false }, 'rule 0: language exists'],
    [{ operator: 'exists', field: 'title', not: true }, 'rule 0: title is missing or empty'],
    [{ operator: 'pattern', field: 'text', value: '/viagra/i', not: false }, 'rule 0: text matches /viagra/i'],
  ])('%j', (source, reason) => {
    expect(decide(set([source]), { ...base, title: '' })).toEqual({ accepted: false, action: 'reject', set: { id: 'set-1', name: 'spam' }, rule: 0, reason });
  });

  it('names the pattern that matched in a list of hundreds', () => {
    const entries = Array.from({ length: 400 }, (_, n) => `/\\bword${n}\\b/i`);
    const big: FilterList = { id: 'big', type: 'patterns', entries, active: true };
    const filter = compile({ kind: 'set', set: set([{ operator: 'patternin', field: 'text', listId: 'big', not: false }]) }, [big]);
    expect(evaluate(filter, { ...base, text: 'a WORD317 here' }, NOW)).toMatchObject({ reason: 'rule 0: text matches /\\bword317\\b/i of list big' });
    expect(evaluate(filter, { ...base, text: 'a word3170 here' }, NOW)).toEqual({ accepted: true });
  });
});

describe('chains', () => {
  const byLanguage = set([{ operator: 'equals', field: 'language', value: 'en', not: false }], { id: 'lang', name: 'english' });
  const bySpam = set([{ operator: 'pattern', field: 'text', value: '/viagra/i', not: false }], { id: 'words', name: 'words' });
  const chain = (sets: string[], active = true): FilterChain => ({ id: 'chain-1', name: 'main', sets, active });
  const run = (filter: FilterChain, sets: FilterSet[] = [byLanguage, bySpam]) =>
    evaluate(compile({ kind: 'chain', chain: filter, sets }, lists), base, NOW);

  it.each([
    ['the first set that rejects decides', chain(['lang', 'words']), { accepted: false, set: { id: 'lang', name: 'english' } }],
    ['in the chain order', chain(['words', 'lang']), { accepted: false, set: { id: 'words', name: 'words' } }],
    ['an empty chain accepts', chain([]), { accepted: true }],
    ['an inactive chain accepts', chain(['lang', 'words'], false), { accepted: true }],
  ])('%s', (_name, filter, expected) => {
    expect(run(filter)).toMatchObject(expected);
  });

  const holdSpam = { ...bySpam, id: 'hold', name: 'hold spam', action: 'hold' as const };
  const holdLanguage = { ...byLanguage, id: 'hold-lang', name: 'hold english', action: 'hold' as const };
  it.each([
    ['a holding set holds', chain(['hold']), [holdSpam], { accepted: false, action: 'hold', set: { id: 'hold' }, rule: 0, reason: 'rule 0: text matches /viagra/i' }],
    ['a later rejecting set beats a hold', chain(['hold', 'lang']), [holdSpam, byLanguage], { accepted: false, action: 'reject', set: { id: 'lang' } }],
    ['an earlier rejecting set rejects', chain(['lang', 'hold']), [holdSpam, byLanguage], { accepted: false, action: 'reject', set: { id: 'lang' } }],
    ['the first holding set names the hold', chain(['hold', 'hold-lang']), [holdSpam, holdLanguage], { accepted: false, action: 'hold', set: { id: 'hold' } }],
    ['a holding set that does not match holds nothing', chain(['hold']), [{ ...holdSpam, rules: [{ operator: 'equals', field: 'language', value: 'de', not: false }] }], { accepted: true }],
  ])('hold: %s', (_name, filter, sets, expected) => {
    expect(run(filter, sets)).toMatchObject(expected);
  });

  it('skips inactive sets', () => {
    expect(run(chain(['lang', 'words']), [{ ...byLanguage, active: false }, bySpam])).toMatchObject({ set: { id: 'words' } });
    expect(run(chain(['lang']), [{ ...byLanguage, active: false }])).toEqual({ accepted: true });
  });

  it('a chain naming an unknown set does not compile', () => {
    expect(() => run(chain(['lang', 'gone']))).toThrow(expect.objectContaining({ path: 'sets[1]', value: 'gone' }));
  });
});

describe('compile errors', () => {
  it.each<[Rule, Partial<FilterError>]>([
    [{ operator: 'contains', field: 'text', value: 'x', not: false }, { path: 'rules[0].operator', kind: 'enum' }],
    [{ operator: 'equals', field: 'author..name', value: 'x', not: false }, { path: 'rules[0].field', kind: 'format' }],
    [{ operator: 'pattern', field: 'text', value: '/(abc/', not: false }, { path: 'rules[0].value', position: 1, kind: 'pattern' }],
    [{ operator: 'pattern', field: 'text', value: '/ab(?=c)/', not: false }, { path: 'rules[0].value', position: 3 }],
    [{ operator: 'pattern', field: 'text', value: '/abc/g', not: false }, { path: 'rules[0].value', position: 5 }],
    [{ operator: 'pattern', field: 'text', value: 'viagra', not: false }, { path: 'rules[0].value', position: 0 }],
    [{ operator: 'patternin', field: 'text', value: ['/ok/', '/x\\1/'], not: false }, { path: 'rules[0].value[1]', position: 2 }],
    [{ operator: 'in', field: 'user', listId: 'nope', not: false }, { path: 'rules[0].listId', value: 'nope' }],
    [{ operator: 'in', field: 'user', listId: 'badwords', not: false }, { path: 'rules[0].listId' }],
    [{ operator: 'patternin', field: 'user', listId: 'off-strings', not: false }, { path: 'rules[0].listId' }],
    [{ operator: 'equals', field: 'user', listId: 'spammers', not: false }, { path: 'rules[0].listId' }],
    [{ operator: 'in', field: 'user', value: ['a'], listId: 'spammers', not: false }, { path: 'rules[0].value' }],
    [{ operator: 'in', field: 'user', not: false }, { path: 'rules[0].value' }],
    [{ operator: 'in', field: 'user', value: 'spammer', not: false }, { path: 'rules[0].value' }],
    [{ operator: 'equals', field: 'user', value: ['a'], not: false }, { path: 'rules[0].value' }],
    [{ operator: 'gt', field: 'date', value: 'yesterday', not: false }, { path: 'rules[0].value' }],
    [{ operator: 'datediff', field: 'date', value: '3600', not: false }, { path: 'rules[0].value' }],
    [{ operator: 'exists', field: 'title', value: true, not: false }, { path: 'rules[0].value' }],
    [{ operator: 'equals', field: 'author.foo', value: 'x', not: false }, { path: 'rules[0].field', kind: 'enum' }],
    [{ operator: 'datediff', field: 'updated', value: 0, not: false }, { path: 'rules[0].field', kind: 'enum' }],
    [{ operator: 'gt', field: 'title', value: '2020-01-01', not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'gt', field: 'date', value: '2024-01-01 10:00Z', not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'gt', field: 'date', value: '2024-02-31', not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'datediff', field: 'date', value: -1, not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'in', field: 'user', value: [], not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'patternin', field: 'text', value: [], not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'in', field: 'user', value: ['a', true], not: false }, { path: 'rules[0].value', kind: 'type' }],
    [{ operator: 'pattern', field: 'text', value: `/${'a'.repeat(1000)}/`, not: false }, { path: 'rules[0].value', kind: 'pattern' }],
  ])('%j', (source, expected) => {
    const error = (() => {
      try {
        compile({ kind: 'set', set: set([source]) }, lists);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(FilterError);
    expect(error).toMatchObject({ setId: 'set-1', ...expected });
  });

  it('names the list entry at fault and the preCondition', () => {
    const broken: FilterList = { id: 'broken', type: 'patterns', entries: ['/ok/', '/[z-a]/'], active: true };
    const filter = set([], { preCondition: { operator: 'patternin', field: 'text', listId: 'broken', not: false } });
    expect(() => compile({ kind: 'set', set: filter }, [broken])).toThrow(/preCondition\.listId: list broken: entries\[1\] invalid pattern \/\[z-a\]\/ at position 2/);
  });
});

describe('parsePattern', () => {
  it.each([
    ['/viagra/i', 'viagra', 'i'],
    ['/a/b/ims', 'a/b', 'ims'],
    ['/a\\/b/u', 'a\\/b', 'u'],
    ['/^x$/', '^x$', ''],
  ])('%s', (text, source, flags) => {
    expect(parsePattern(text)).toMatchObject({ source, flags });
  });

  it.each([
    ['abc', 0],
    ['/abc', 4],
    ['//i', 1],
    ['/a/x', 3],
    ['/a/ii', 4],
    ['/a(b/', 1],
    ['/ab)/', 1],
    ['/x{2000}/', 2],
  ])('%s fails at position %i', (text, position) => {
    expect(() => parsePattern(text)).toThrow(expect.objectContaining({ name: 'PatternError', position }));
  });

  it('patternSet reports the index of a bad entry', () => {
    const error = (() => {
      try {
        patternSet(['/a/', '/b/', '/(/']);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(PatternError);
    expect(error).toMatchObject({ index: 2, position: 1 });
  });
});

describe('governingFilter', () => {
  const input = { id: 'input', active: true };
  const collection = { id: 'collection', active: true };
  const contract = { id: 'contract', active: true };
  const off = { id: 'off', active: false };
  it.each([
    [input, collection, contract, 'input'],
    [undefined, collection, contract, 'collection'],
    [null, null, contract, 'contract'],
    [off, collection, contract, 'collection'],
    [off, off, contract, 'contract'],
    [off, undefined, off, undefined],
    [undefined, undefined, undefined, undefined],
  ])('%j, %j, %j → %s', (a, b, c, expected) => {
    expect(governingFilter(a, b, c)?.id).toBe(expected);
  });
});

describe('bounds (limits.ts)', () => {
  // `/a[ab]{990}c/` compiles to 994 instructions.
  const costly = (n: number) => Array.from({ length: n }, (_, i) => `/a[ab]{990}c${i}/`);
  const size = (patterns: string[]) => patternSet(patterns).size;

  it('measures a pattern and a pattern set by their compiled size', () => {
    expect(parsePattern('/a[ab]{990}c/').size).toBe(994);
    expect(size(costly(3))).toBe(3 * parsePattern('/a[ab]{990}c0/').size);
    expect(patternSet([]).size).toBe(0);
  });

  const perRule = size(costly(66));
  const cases: { name: string; rules: Rule[]; lists?: FilterList[]; refused: boolean }[] = [
    { name: 'three rules just under the bound', rules: [0, 1, 2].map(() => ({ operator: 'patternin', field: 'text', value: costly(66), not: false })), refused: false },
    { name: 'four such rules', rules: [0, 1, 2, 3].map(() => ({ operator: 'patternin', field: 'text', value: costly(66), not: false })), refused: true },
    {
      name: 'one list named by four rules counts four times',
      rules: [0, 1, 2, 3].map(() => ({ operator: 'patternin', field: 'text', listId: 'big', not: false })),
      lists: [{ id: 'big', type: 'patterns', entries: costly(66), active: true }],
      refused: true,
    },
    {
      name: 'an inactive list counts nothing',
      rules: [0, 1, 2, 3].map(() => ({ operator: 'patternin', field: 'text', listId: 'big', not: false })),
      lists: [{ id: 'big', type: 'patterns', entries: costly(66), active: false }],
      refused: false,
    },
  ];
  it.each(cases)('a set: $name', ({ rules, lists: own = [], refused }) => {
    expect(3 * perRule).toBeLessThanOrEqual(MAX_COMPILED_SIZE);
    expect(4 * perRule).toBeGreaterThan(MAX_COMPILED_SIZE);
    const run = () => compile({ kind: 'set', set: set(rules) }, own);
    if (!refused) return void expect(run).not.toThrow();
    expect(run).toThrow(FilterError);
    try {
      run();
    } catch (error) {
      expect(error).toMatchObject({ kind: 'range', path: 'rules', setId: 'set-1' });
      expect((error as Error).message).toMatch(/^set spam: rules: .* compile to \d+ instructions, more than 200000/);
    }
  });

  it('refuses a list over the bound when it is saved, naming the entry where it crossed', () => {
    const entries = costly(250);
    let total = 0;
    const crossing = entries.findIndex((entry) => (total += parsePattern(entry).size) > MAX_COMPILED_SIZE);
    const problems = entryProblems('patterns', entries);
    expect(problems).toEqual([expect.objectContaining({ path: 'entries', kind: 'range' })]);
    expect(problems[0]!.message).toContain(`crossed at entries[${crossing}]`);
    expect(entryProblems('patterns', entries.slice(0, crossing))).toEqual([]);
    expect(entryProblems('strings', entries)).toEqual([]);
  });

  it('refuses a set whose inline patterns exceed the bound when it is saved', () => {
    const named = (n: number) => Array.from({ length: n }, (_, i): [Rule, string] => [{ operator: 'patternin', field: 'text', value: costly(66), not: false }, `rules[${i}]`]);
    expect(setRuleProblems(named(3))).toEqual([]);
    expect(setRuleProblems(named(4))).toEqual([expect.objectContaining({ path: 'rules', kind: 'range' })]);
  });

  it(`reads at most ${MAX_FIELD_CHARS} characters of a field, over all its values`, () => {
    const filter = set([{ operator: 'pattern', field: 'tags', value: '/needle/', not: false }]);
    const pad = 'x'.repeat(MAX_FIELD_CHARS - 6);
    expect(decide(filter, { ...base, tags: [`${pad}needle`] }).accepted).toBe(false);
    expect(decide(filter, { ...base, tags: [`${pad}Xneedle`] }).accepted).toBe(true);
    expect(decide(filter, { ...base, tags: [pad, 'needle'] }).accepted).toBe(false);
    expect(decide(filter, { ...base, tags: [pad, 'xxxxxxx', 'needle'] }).accepted).toBe(true);
  });
});

describe('profane (obscenity, English)', () => {
  const profane = set([{ operator: 'profane', field: 'text', not: false }]);
  it.each([
    ['f.u.c.k', true],
    ['what a fuuuuck', true],
    ['5h1t happens', true],
    ['sh!t', true],
    ['Scunthorpe United won', false],
    ['a classic assassin', false],
    ['I passed the assessment', false],
    ['cocktail hour', false],
    ['shitake mushrooms', false],
    ['as shown', false],
    ['hello world', false],
  ])('%j → %s', (text, rejected) => {
    const decision = decide(profane, { ...base, text });
    expect(decision.accepted).toBe(!rejected);
    if (rejected) expect(decision).toMatchObject({ reason: 'rule 0: text contains English profanity' });
  });
  it('takes no value', () => {
    expect(setRuleProblems([[{ operator: 'profane', field: 'text', value: 'x', not: false }, 'rules[0]']])).toMatchObject([{ path: 'rules[0].value', kind: 'type' }]);
  });
});

describe('built-in lists (naughty-words)', () => {
  it('ships at least 20 languages, each a patterns list with a stable 24-hex id that compiles', () => {
    expect(BUILT_IN_LISTS.length).toBeGreaterThanOrEqual(20);
    expect(builtInListId('en')).toBe('f11941554f5c2ed281f123c4');
    for (const list of BUILT_IN_LISTS) {
      expect(list.id).toMatch(/^[0-9a-f]{24}$/);
      expect(list.version).toMatch(/^naughty-words@\d+\.\d+\.\d+$/);
      expect(entryProblems('patterns', list.entries)).toEqual([]);
    }
  });
  it.each([
    ['en', 'what a bunch of bullshit, really', 'a classic class'],
    ['de', 'du bist ein Arschloch!', 'ein Barsch im See'],
    ['fr', 'quel connard', 'déconnecté'],
    ['ja', 'これはちんこです', 'こんにちは'],
  ])('%s: matches a word of the list, not a longer word containing it', (language, hit, miss) => {
    const list = builtInList(builtInListId(language))!;
    const filter = compile({ kind: 'set', set: set([{ operator: 'patternin', field: 'text', listId: list.id, not: false }]) }, [list]);
    expect(evaluate(filter, { ...base, text: hit }, NOW)).toMatchObject({ accepted: false });
    expect(evaluate(filter, { ...base, text: miss }, NOW)).toEqual({ accepted: true });
  });
});
