/**
 * `removeItems` and `updateFromSource` (issue 34 point 1, docs/api.md#removed-at-the-source)
 * against a real database (both: TEST_DATABASE_URL): removal everywhere the item is held, only
 * what the named inputs collected, nothing for another service's or an unknown id, no
 * resurrection by a re-poll, no kudos refresh, no content in a contract export, duplicates kept
 * apart from a removed card; pushed edits on every
 * copy, under a moderator's edit, never on a removed item.
 */
import { describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant, testPostgresUrl } from '../../test/helper.ts';
import type { ContentItem } from '../item.ts';
import { createCollection } from './collections.ts';
import { type Db, openDb } from './db.ts';
import { changeItem } from './items/change.ts';
import { collectionVersion } from './items/changes.ts';
import { findItem } from './items/find.ts';
import { setItemsState } from './items/moderate.ts';
import { countItems } from './items/read-sql.ts';
import { rowToItem, rowToModeratorItem } from './items/rows.ts';
import { storedItemIds, storeItems } from './items/write.ts';
import { claimKudosDue } from './kudos.ts';
import { exportContract } from './contract-transfer.ts';
import { removeItems, updateFromSource } from './removals.ts';
import { ownsEntries } from '../services/table.ts';

const INPUT_A = 'a'.repeat(24);
const INPUT_B = 'b'.repeat(24);
const actor = { id: 'tester', name: 'Tester' };

/** Stores `items` (published) in the collection as collected by `inputId`; `seen` as a re-poll's items already stored. */
async function store(db: Db, at: { contractId: string; collectionId: string }, inputId: string, items: ContentItem[], seen: ContentItem[] = []) {
  return db.transaction().execute((trx) => storeItems(trx, { ...at, inputId, state: 'published' }, items, ownsEntries, Date.now(), undefined, seen));
}

const published = (db: Db, at: { contractId: string; collectionId: string }) => countItems(db, { ...at, state: 'published', sinceMs: 0, untilMs: Date.now() + 60_000 });

async function twoContracts(db: Db) {
  const one = await buildTenant(db, 'One');
  const two = await buildTenant(db, 'Two');
  return {
    a: { contractId: one.contract.id, collectionId: one.collection.id },
    b: { contractId: two.contract.id, collectionId: two.collection.id },
  };
}

const post = (id: string, text = `Text of ${id}`) => buildItem({ id, service: 'mastodon', type: 'status', text, url: `https://social.example/@x/${id}`, date: new Date(Date.now() - 60_000).toISOString() });

describe('removeItems', () => {
  it('removes a post from every collection holding it, keeps it in the queue as removed, and a re-poll does not bring it back', async () => {
    const { db } = await build();
    const { a, b } = await twoContracts(db);
    const gone = post('mastodon_social.example:1');
    const stays = post('mastodon_social.example:2');
    await store(db, a, INPUT_A, [gone, stays]);
    await store(db, b, INPUT_B, [gone]);
    const versionBefore = await collectionVersion(db, a.contractId, a.collectionId);
    const at = Date.parse('2026-11-27T10:00:00.000Z');

    const removed = await removeItems(db, { service: 'mastodon', ids: [gone.id] }, { reason: 'deleted', at }, ownsEntries);

    expect(removed.sort((x, y) => x.contractId.localeCompare(y.contractId))).toEqual(
      [
        { ...a, ids: [gone.id] },
        { ...b, ids: [gone.id] },
      ].sort((x, y) => x.contractId.localeCompare(y.contractId)),
    );
    expect(await published(db, a)).toBe(1);
    expect(await published(db, b)).toBe(0);
    expect(await collectionVersion(db, a.contractId, a.collectionId)).toBeGreaterThan(versionBefore!);
    const row = (await findItem(db, a.contractId, a.collectionId, gone.id))!;
    expect(row.state).toBe('removed');
    expect(row.seq).toBe(await collectionVersion(db, a.contractId, a.collectionId));
    expect(rowToModeratorItem(row)).toMatchObject({ id: gone.id, state: 'removed', removedAt: '2026-11-27T10:00:00.000Z', removedReason: 'deleted' });
    expect(rowToItem(row)).not.toHaveProperty('removedAt');

    // A re-poll still returning it (a lagging timeline) neither stores it again nor updates it.
    const known = await storedItemIds(db, a.contractId, a.collectionId, [gone.id]);
    expect(known.has(gone.id)).toBe(true);
    const edited = { ...gone, text: 'Changed after deletion' };
    expect(await store(db, a, INPUT_A, [], [edited])).toBe(0);
    const after = (await findItem(db, a.contractId, a.collectionId, gone.id))!;
    expect(after.state).toBe('removed');
    expect(rowToModeratorItem(after).text).toBe(gone.text);
    expect(await published(db, a)).toBe(1);

    // Removing it again changes nothing.
    expect(await removeItems(db, { service: 'mastodon', ids: [gone.id] }, { reason: 'deleted' }, ownsEntries)).toEqual([]);
  });

  it('leaves a removed item out of kudos refreshes, and its content out of a contract export', async () => {
    const { db } = await build();
    const tenant = await buildTenant(db);
    const ranked = await createCollection(db, tenant.contract.id, { name: 'Ranked', type: 'ranked', dedupe: 'off' }, 'test');
    const at = { contractId: tenant.contract.id, collectionId: ranked.id };
    const minutes = (n: number) => new Date(Date.now() - n * 60_000).toISOString();
    const gone = buildItem({ id: 'twitter_1', service: 'twitter', type: 'status', text: 'Quokkadeleted words', date: minutes(5) });
    const stays = buildItem({ id: 'twitter_2', service: 'twitter', type: 'status', text: 'Kept words', date: minutes(5) });
    await store(db, at, INPUT_A, [gone, stays]);
    await removeItems(db, { service: 'twitter', ids: [gone.id] }, { reason: 'gone' }, ownsEntries);
    const due = await claimKudosDue(db, Date.now() + 3_600_000, { refreshS: 1, windowS: 86_400, services: ['twitter'], limit: 10 });
    expect(due.map((item) => item.id)).toEqual([stays.id]);
    const lines: string[] = [];
    await exportContract(db, tenant.contract.id, async (line) => void lines.push(line));
    const items = lines.map((line) => JSON.parse(line) as { table?: string; row?: { id: string; state: string; body: string } }).filter((line) => line.table === 'items');
    expect(items.map((line) => [line.row!.id, line.row!.state]).sort()).toEqual([[gone.id, 'removed'], [stays.id, 'published']]);
    expect(lines.join('\n')).not.toContain('Quokkadeleted');
    expect(lines.join('\n')).toContain('Kept words');
    expect(JSON.parse(items.find((line) => line.row!.id === gone.id)!.row!.body)).toMatchObject({ id: gone.id, service: 'twitter', type: 'status', date: gone.date, text: '' });
  });

  // PostgreSQL: processes share it; a SQLite file is owned by one process (docs/operations.md).
  it.skipIf(!testPostgresUrl)('removes an item once when two processes remove it at the same time', async () => {
    const { db, config } = await build();
    const { a } = await twoContracts(db);
    const items = [post('mastodon_social.example:40'), post('mastodon_social.example:41')];
    await store(db, a, INPUT_A, items);
    const other = openDb(config.databaseUrl);
    try {
      const target = { service: 'mastodon', ids: items.map((item) => item.id) };
      const [one, two] = await Promise.all([removeItems(db, target, { reason: 'deleted' }, ownsEntries), removeItems(other, target, { reason: 'deleted' }, ownsEntries)]);
      expect([...one, ...two].flatMap((removed) => removed.ids).sort()).toEqual(items.map((item) => item.id).sort());
    } finally {
      await other.destroy();
    }
  });

  it('with inputIds removes only what those inputs collected (a feed tombstone)', async () => {
    const { db } = await build();
    const { a, b } = await twoContracts(db);
    const entry = buildItem({ id: 'rss_abc', date: new Date(Date.now() - 60_000).toISOString() });
    await store(db, a, INPUT_A, [entry]);
    await store(db, b, INPUT_B, [entry]);
    const removed = await removeItems(db, { service: 'rss', ids: [entry.id], inputIds: [INPUT_A] }, { reason: 'deleted' }, ownsEntries);
    expect(removed).toEqual([{ ...a, ids: [entry.id] }]);
    expect((await findItem(db, b.contractId, b.collectionId, entry.id))!.state).toBe('published');
    expect(await removeItems(db, { service: 'rss', ids: [entry.id], inputIds: [] }, { reason: 'deleted' }, ownsEntries)).toEqual([]);
  });

  it("changes nothing for an unknown id, another service's id, or an id naming another service", async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const item = post('mastodon_social.example:7');
    await store(db, a, INPUT_A, [item]);
    const version = await collectionVersion(db, a.contractId, a.collectionId);
    for (const target of [
      { service: 'mastodon', ids: ['mastodon_social.example:8'] },
      { service: 'bluesky', ids: [item.id] },
      { service: 'mastodon', ids: ['mastodon_', 'bluesky_social.example:7'] },
      { service: 'mastodon', ids: [] },
    ]) {
      expect(await removeItems(db, target, { reason: 'deleted' }, ownsEntries), JSON.stringify(target)).toEqual([]);
    }
    await expect(removeItems(db, { service: 'mastodon', ids: [item.id] }, { reason: 'spam' as 'deleted' }, ownsEntries)).rejects.toThrow(TypeError);
    expect((await findItem(db, a.contractId, a.collectionId, item.id))!.state).toBe('published');
    expect(await collectionVersion(db, a.contractId, a.collectionId)).toBe(version);
  });

  it('no moderation publishes a removed item again', async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const item = post('mastodon_social.example:9');
    await store(db, a, INPUT_A, [item]);
    await removeItems(db, { service: 'mastodon', ids: [item.id] }, { reason: 'withheld' }, ownsEntries);
    const audit = { contractId: a.contractId, actor };
    expect(await setItemsState(db, a.contractId, a.collectionId, [item.id], 'published', audit)).toEqual({ removed: [item.id] });
    expect(await changeItem(db, a.contractId, a.collectionId, item.id, { state: 'published' }, audit)).toEqual({ removed: true });
    expect(await changeItem(db, a.contractId, a.collectionId, item.id, { pinned: true }, audit)).toEqual({ removed: true });
    expect((await findItem(db, a.contractId, a.collectionId, item.id))!.state).toBe('removed');
  });

  it('merges no later post into a removed card through a key the removal could not find again (the fingerprint of its earlier text)', async () => {
    const { db } = await build();
    const tenant = await buildTenant(db);
    const collection = await createCollection(db, tenant.contract.id, { name: 'Near duplicates', dedupe: 'url+text' }, 'test');
    const at = { contractId: tenant.contract.id, collectionId: collection.id };
    const first = 'The harbour ferry timetable changes on Monday with two extra evening crossings for commuters';
    // Statuses have no title: their cards are indexed by the fingerprint of their text.
    const status = (id: string, text: string): ContentItem => ({ ...post(id, text), title: undefined });
    const card = status('mastodon_social.example:50', first);
    await store(db, at, INPUT_A, [card]);
    // Edited at the source: the card is indexed by both texts; the removal finds only the second again.
    expect(await updateFromSource(db, { ...card, text: 'Completely different words about a mountain railway opening its new summit station soon' })).toHaveLength(1);
    await removeItems(db, { service: 'mastodon', ids: [card.id] }, { reason: 'deleted' }, ownsEntries);
    // Another author's post of the first text: a card of its own, not merged into the removed one.
    const later = { ...status('mastodon_social.example:51', first), url: 'https://other.example/@y/51' };
    await store(db, at, INPUT_A, [later]);
    expect((await findItem(db, at.contractId, collection.id, later.id))?.state).toBe('published');
    expect(await published(db, at)).toBe(1);
  });

  it("keeps another author's copy of the story when the card is removed, and takes a removed duplicate off its card", async () => {
    const { db } = await build();
    const tenant = await buildTenant(db);
    const collection = await createCollection(db, tenant.contract.id, { name: 'Deduplicated', dedupe: 'url' }, 'test');
    const at = { contractId: tenant.contract.id, collectionId: collection.id };
    const story = 'https://news.example/story';
    const card = { ...post('mastodon_social.example:10'), url: story, kudos: { score: 3 } };
    const copy = { ...post('mastodon_social.example:11'), url: story, kudos: { score: 2 } };
    const third = { ...post('mastodon_social.example:12'), url: story, kudos: { score: 1 } };
    await store(db, at, INPUT_A, [card]);
    await store(db, at, INPUT_A, [copy, third]);
    expect(await published(db, at)).toBe(1);
    expect(rowToItem((await findItem(db, at.contractId, collection.id, card.id))!).duplicates?.map((d) => d.id)).toEqual([copy.id, third.id]);

    // The removed duplicate leaves its card: entry and score.
    await removeItems(db, { service: 'mastodon', ids: [third.id] }, { reason: 'deleted' }, ownsEntries);
    const kept = rowToItem((await findItem(db, at.contractId, collection.id, card.id))!);
    expect(kept.duplicates?.map((d) => d.id)).toEqual([copy.id]);
    expect(kept.kudos.score).toBe(5);
    expect((await findItem(db, at.contractId, collection.id, third.id))!.state).toBe('removed');

    // The removed card: its other copy becomes a published card, and takes the next copy of the story.
    await removeItems(db, { service: 'mastodon', ids: [card.id] }, { reason: 'deleted' }, ownsEntries);
    expect((await findItem(db, at.contractId, collection.id, copy.id))!.state).toBe('published');
    expect(await published(db, at)).toBe(1);
    const later = { ...post('mastodon_social.example:13'), url: story };
    await store(db, at, INPUT_A, [later]);
    expect(await published(db, at)).toBe(1);
    expect(rowToItem((await findItem(db, at.contractId, collection.id, copy.id))!).duplicates?.map((d) => d.id)).toEqual([later.id]);
    // The removed ones stay known: not collected again.
    expect([...(await storedItemIds(db, at.contractId, collection.id, [card.id, third.id]))].sort()).toEqual([card.id, third.id].sort());
  });

  it('closes up the pins of the collection when a pinned item is removed', async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const items = [post('mastodon_social.example:20'), post('mastodon_social.example:21'), post('mastodon_social.example:22')];
    await store(db, a, INPUT_A, items);
    const audit = { contractId: a.contractId, actor };
    for (const item of items) await changeItem(db, a.contractId, a.collectionId, item.id, { pinned: true }, audit);
    const first = (await findItem(db, a.contractId, a.collectionId, items[0]!.id))!.pinPosition;
    await removeItems(db, { service: 'mastodon', ids: [items[1]!.id] }, { reason: 'protected' }, ownsEntries);
    const positions = await Promise.all(items.map(async (item) => (await findItem(db, a.contractId, a.collectionId, item.id))!.pinPosition));
    expect(positions[1]).toBeNull();
    expect([positions[0], positions[2]].map(Number).sort()).toEqual([1, 2]);
    expect(first).not.toBeNull();
  });
});

describe('updateFromSource', () => {
  it("updates every stored copy, under a moderator's edit only the original, and never a removed one", async () => {
    const { db } = await build();
    const { a, b } = await twoContracts(db);
    const item = post('mastodon_social.example:30', 'First version');
    const other = post('mastodon_social.example:31');
    await store(db, a, INPUT_A, [item, other]);
    await store(db, b, INPUT_B, [item]);
    await changeItem(db, b.contractId, b.collectionId, item.id, { edit: { text: 'Moderator wording' } }, { contractId: b.contractId, actor });

    const updated = await updateFromSource(db, { ...item, text: 'Second version' });
    expect(updated.map((u) => u.collectionId).sort()).toEqual([a.collectionId, b.collectionId].sort());
    expect(rowToItem((await findItem(db, a.contractId, a.collectionId, item.id))!).text).toBe('Second version');
    const edited = rowToModeratorItem((await findItem(db, b.contractId, b.collectionId, item.id))!);
    expect(edited.text).toBe('Moderator wording');
    expect(edited.original?.text).toBe('Second version');

    // Same content again: nothing changes. Another service's item of the same id: nothing.
    expect(await updateFromSource(db, { ...item, text: 'Second version' })).toEqual([]);
    expect(await updateFromSource(db, { ...item, service: 'bluesky', text: 'Hostile' })).toEqual([]);

    await removeItems(db, { service: 'mastodon', ids: [other.id] }, { reason: 'deleted' }, ownsEntries);
    expect(await updateFromSource(db, { ...other, text: 'After removal' })).toEqual([]);
    expect(rowToModeratorItem((await findItem(db, a.contractId, a.collectionId, other.id))!).text).toBe(other.text);
  });
});
