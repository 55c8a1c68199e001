/**
 * Tenant in every query of store/items/ (issue 31, point 2): every exported function that takes a
 * database handle takes the contract id (or a target holding it), and a contract naming another
 * contract's collection reads nothing and changes nothing, whatever the caller checked before
 * (`owned()` stays for the 404/403 answer). The attack: contract A passes B's collection (and B's
 * item, duplicate and audit entry ids) to each function; B's rows stay as they were.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant, seedItems } from '../../../test/helper.ts';
import { createCollection } from '../collections.ts';
import type { Db } from '../db.ts';
import { removeDuplicate, splitDuplicate, updateCard } from './cards.ts';
import { changeItem, setEdit, setPin } from './change.ts';
import { arrivedItems, bumpVersion, changedItems, collectionVersion, latestArrival } from './changes.ts';
import { cardIds, dedupeMode, deleteCardKeys } from './dedupe.ts';
import { findItem, findItems, findPublishedItems, recentItems, storedItemsPage, storedItemsSince } from './find.ts';
import { changeStates, holdItems, setItemsState } from './moderate.ts';
import { countItems, listItemKeys, listItems } from './read-sql.ts';
import { revertModeration } from './revert.ts';
import { applyEdits, storedItemIds, storeItems } from './write.ts';
import { ownsEntries } from '../../services/table.ts';

const DIR = import.meta.dirname;

/** The parameter list of each exported function of `text` (`export [async] function name(…)`), parentheses balanced. */
function exportedParameters(text: string): [name: string, parameters: string][] {
  const found: [string, string][] = [];
  for (const match of text.matchAll(/^export (?:async )?function (\w+)(?:<[^(]*>)?\(/gm)) {
    let depth = 1;
    let i = match.index + match[0].length;
    const start = i;
    for (; i < text.length && depth > 0; i++) depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
    found.push([match[1]!, text.slice(start, i - 1)]);
  }
  return found;
}

describe('store/items/ takes the contract in every query', () => {
  it('every exported function with a database handle takes the contract id, or a target, query or audit holding it', () => {
    const files = readdirSync(DIR).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
    const checked: string[] = [];
    const missing: string[] = [];
    for (const file of files) {
      for (const [name, parameters] of exportedParameters(readFileSync(join(DIR, file), 'utf8'))) {
        if (!/\bDb\b|\bTransaction<Database>/.test(parameters)) continue;
        checked.push(name);
        if (!/\bcontractId\b|\bStoreTarget\b|\bItemQuery\b|\bModerationAudit\b/.test(parameters)) missing.push(`${file} ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The check sees the modules' functions (a parser that found none would pass anything).
    expect(checked).toEqual(expect.arrayContaining(['bumpVersion', 'storeItems', 'storeDeduplicated', 'findItem', 'listItems', 'countItems', 'changeItem', 'revertModeration', 'splitDuplicate']));
    expect(checked.length).toBeGreaterThanOrEqual(22);
  });
});

/** Contract B with a collection holding a card with a merged duplicate, a pinned item and one unpublished; contract A, the attacker. */
async function twoTenants() {
  const { db } = await build();
  const a = await buildTenant(db, 'Attacker');
  const b = await buildTenant(db, 'Victim');
  const collection = await createCollection(db, b.contract.id, { name: 'Victim news', dedupe: 'url' }, 'test');
  const victim = { ...b, collection };
  const now = Date.now();
  const at = (minutes: number) => new Date(now - minutes * 60_000).toISOString();
  await seedItems(db, victim, [
    buildItem({ id: 'rss_card', url: 'https://news.example/story', title: 'The story', date: at(10) }),
    buildItem({ id: 'rss_pinned', url: 'https://news.example/pinned', title: 'Pinned', date: at(20) }),
  ]);
  await seedItems(db, victim, [buildItem({ id: 'rss_copy', url: 'https://news.example/story', title: 'The story again', date: at(5) })]);
  await seedItems(db, victim, [buildItem({ id: 'rss_quiet', url: 'https://news.example/quiet', title: 'Quiet', date: at(30) })], 'unpublished');
  const audit = { contractId: b.contract.id, actor: { id: null, name: 'test' } };
  expect(await changeItem(db, b.contract.id, collection.id, 'rss_pinned', { pinned: true }, audit)).toMatchObject({ auditIds: [expect.any(String)] });
  const moderated = await setItemsState(db, b.contract.id, collection.id, ['rss_pinned'], 'unpublished', audit);
  if (!('auditId' in moderated)) throw new Error('the victim could not moderate its own item');
  await setItemsState(db, b.contract.id, collection.id, ['rss_pinned'], 'published', audit);
  return { db, a, b: victim, auditId: moderated.auditId, now };
}

/** Everything of B's collection a function could read or change: its items, duplicates, keys and version. */
async function snapshot(db: Db, collectionId: string) {
  return {
    items: await db.selectFrom('items').select(['id', 'state', 'body', 'seq', 'pinPosition', 'moderation', 'held', 'score']).where('collectionId', '=', collectionId).orderBy('id').execute(),
    duplicates: await db.selectFrom('itemDuplicates').selectAll().where('collectionId', '=', collectionId).orderBy('id').execute(),
    urls: await db.selectFrom('itemUrls').selectAll().where('collectionId', '=', collectionId).orderBy('urlHash').execute(),
    prints: await db.selectFrom('itemPrints').select(['bandKey', 'itemId']).where('collectionId', '=', collectionId).orderBy('bandKey').orderBy('itemId').execute(),
    collection: await db.selectFrom('collections').select(['version', 'dedupe']).where('id', '=', collectionId).executeTakeFirstOrThrow(),
  };
}

const ALL = ['rss_card', 'rss_copy', 'rss_pinned', 'rss_quiet'];
const empty = (value: unknown) => value === undefined || value === 0 || value === 'off' || (Array.isArray(value) && value.length === 0) || (value instanceof Set && value.size === 0);
const window = (now: number) => ({ sinceMs: now - 86_400_000, untilMs: now + 60_000 });
const page = { count: 20, offset: 0, sort: 'time', order: 'desc' } as const;

/** Each read, as contract `contractId` asks collection `collectionId`: B gets its rows, A nothing. */
const reads: [name: string, read: (db: Db, contractId: string, collectionId: string, now: number) => Promise<unknown>][] = [
  ['storedItemIds', (db, contractId, collectionId) => storedItemIds(db, contractId, collectionId, ALL)],
  ['cardIds', (db, contractId, collectionId) => cardIds(db, contractId, collectionId, ALL)],
  ['findItem', (db, contractId, collectionId) => findItem(db, contractId, collectionId, 'rss_card')],
  ['findItems', (db, contractId, collectionId) => findItems(db, contractId, collectionId, ALL)],
  ['findPublishedItems', (db, contractId, collectionId) => findPublishedItems(db, contractId, collectionId, ALL)],
  ['recentItems', (db, contractId, collectionId, now) => recentItems(db, contractId, collectionId, now - 86_400_000, 10)],
  ['storedItemsPage', (db, contractId, collectionId, now) => storedItemsPage(db, { contractId, collectionId, ...window(now) }, undefined, 10)],
  ['storedItemsSince', (db, contractId, collectionId, now) => storedItemsSince(db, contractId, collectionId, now - 86_400_000, 10)],
  ['listItems', (db, contractId, collectionId, now) => listItems(db, { contractId, collectionId, ...window(now) }, page)],
  ['listItemKeys, pinned only', (db, contractId, collectionId, now) => listItemKeys(db, { contractId, collectionId, ...window(now) }, page, 'only')],
  ['listItemKeys, published', (db, contractId, collectionId, now) => listItemKeys(db, { contractId, collectionId, ...window(now), state: 'published' }, page, 'none')],
  ['countItems', (db, contractId, collectionId, now) => countItems(db, { contractId, collectionId, ...window(now) })],
  ['collectionVersion', (db, contractId, collectionId) => collectionVersion(db, contractId, collectionId)],
  ['changedItems', (db, contractId, collectionId) => changedItems(db, contractId, collectionId, 0, 1_000_000)],
  ['arrivedItems', (db, contractId, collectionId) => arrivedItems(db, contractId, collectionId, 0)],
  ['latestArrival', (db, contractId, collectionId) => latestArrival(db, contractId, collectionId)],
  ['dedupeMode', (db, contractId, collectionId) => db.transaction().execute((trx) => dedupeMode(trx, contractId, collectionId))],
];

describe('a contract naming another contract\'s collection', () => {
  it.each(reads)('%s reads nothing of it (its own contract reads its rows)', async (_name, read) => {
    const { db, a, b, now } = await twoTenants();
    expect(empty(await read(db, b.contract.id, b.collection.id, now))).toBe(false);
    expect(await read(db, a.contract.id, b.collection.id, now)).toSatisfy(empty);
  });

  it('changes nothing of it: states, holds, pins, edits, splits, erasures, keys, versions, stores and reverts', async () => {
    const { db, a, b, auditId, now } = await twoTenants();
    const before = await snapshot(db, b.collection.id);
    const [duplicate] = before.duplicates;
    expect(duplicate).toMatchObject({ id: 'rss_copy', cardId: 'rss_card' });
    const attacker = a.contract.id;
    const target = { contractId: attacker, collectionId: b.collection.id };
    const audit = { contractId: attacker, actor: { id: null, name: 'attacker' } };
    const version = async () => 1_000_000;
    // Each attempt either answers that there is nothing (checked) or throws inside its transaction (rolled back).
    const attempts: [string, () => Promise<unknown>][] = [
      ['setItemsState', async () => expect(await setItemsState(db, attacker, b.collection.id, ['rss_card'], 'unpublished', audit)).toEqual({ missing: ['rss_card'] })],
      ['changeItem', async () => expect(await changeItem(db, attacker, b.collection.id, 'rss_card', { state: 'unpublished', pinned: true, edit: { title: 'Hacked' } }, audit)).toEqual({ missing: true })],
      ['changeStates', () => db.transaction().execute(async (trx) => expect((await changeStates(trx, attacker, b.collection.id, ALL, 'unpublished')).before.size).toBe(0))],
      ['holdItems', () => db.transaction().execute((trx) => holdItems(trx, attacker, b.collection.id, new Map([['rss_card', { set: { id: null, name: 'x' }, rule: 0, reason: 'x' }]])))],
      ['setPin', () => db.transaction().execute((trx) => setPin(trx, attacker, b.collection.id, 'rss_card', { pinned: true }, version))],
      ['setEdit', () => db.transaction().execute((trx) => setEdit(trx, attacker, b.collection.id, 'rss_card', { title: 'Hacked' }, version))],
      ['updateCard', () => db.transaction().execute((trx) => updateCard(trx, attacker, b.collection.id, 'rss_card', 1_000_000, (card) => ({ ...card, title: 'Hacked' })))],
      ['splitDuplicate', async () => expect(await splitDuplicate(db, target, 'rss_card', 'rss_copy', audit)).toBeUndefined()],
      ['removeDuplicate', () => db.transaction().execute((trx) => removeDuplicate(trx, attacker, duplicate!, 1_000_000, ownsEntries))],
      ['deleteCardKeys', () => db.transaction().execute(async (trx) => deleteCardKeys(trx, attacker, b.collection.id, await trx.selectFrom('items').select(['id', 'body', 'dateMs']).where('collectionId', '=', b.collection.id).execute(), [duplicate!], ownsEntries))],
      ['bumpVersion', () => db.transaction().execute((trx) => bumpVersion(trx, attacker, b.collection.id))],
      ['applyEdits', () => db.transaction().execute((trx) => applyEdits(trx, attacker, b.collection.id, [buildItem({ id: 'rss_card', url: 'https://news.example/story', title: 'Hacked' })], version))],
      ['storeItems', () => db.transaction().execute((trx) => storeItems(trx, { ...target, inputId: '0'.repeat(24), state: 'published' }, [buildItem({ id: 'rss_planted', date: new Date(now).toISOString() })], ownsEntries, now, undefined, [buildItem({ id: 'rss_card', title: 'Hacked' })]))],
      ['revertModeration', async () => expect(await revertModeration(db, attacker, auditId, audit.actor)).toEqual({ notRevertable: true })],
    ];
    const outcomes: string[] = [];
    for (const [name, attempt] of attempts) {
      const failed = await attempt().then(
        () => false,
        (error: unknown) => error instanceof Error && !error.message.includes('expected'),
      );
      outcomes.push(`${name}${failed ? ' (refused)' : ''}`);
      expect(await snapshot(db, b.collection.id), name).toEqual(before);
    }
    expect(outcomes).toHaveLength(attempts.length);
  });
});
