/**
 * `removeItems` and `updateFromSource` (issue 34 point 1, docs/api.md#removed-at-the-source)
 * against a real database (both: TEST_DATABASE_URL): removal everywhere the item is held, only
 * what the named inputs collected, nothing for another service's or an unknown id, no
 * resurrection by a re-poll, duplicates kept apart from a removed card; pushed edits on every
 * copy, under a moderator's edit, never on a removed item.
 */
import { describe, expect, it } from 'vitest';
import { build, buildItem, buildTenant } from '../../test/helper.ts';
import type { ContentItem } from '../item.ts';
import { createCollection } from './collections.ts';
import type { Db } from './db.ts';
import { changeItem, collectionVersion, countItems, findItem, rowToItem, rowToModeratorItem, setItemsState, storeItems, storedItemIds } from './items.ts';
import { removeItems, updateFromSource } from './removals.ts';

const INPUT_A = 'a'.repeat(24);
const INPUT_B = 'b'.repeat(24);
const actor = { id: 'tester', name: 'Tester' };

/** Stores `items` (published) in the collection as collected by `inputId`; `seen` as a re-poll's items already stored. */
async function store(db: Db, at: { contractId: string; collectionId: string }, inputId: string, items: ContentItem[], seen: ContentItem[] = []) {
  return db.transaction().execute((trx) => storeItems(trx, { ...at, inputId, state: 'published' }, items, Date.now(), undefined, seen));
}

const published = (db: Db, collectionId: string) => countItems(db, { collectionId, state: 'published', sinceMs: 0, untilMs: Date.now() + 60_000 });

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
    const versionBefore = await collectionVersion(db, a.collectionId);
    const at = Date.parse('2026-11-27T10:00:00.000Z');

    const removed = await removeItems(db, { service: 'mastodon', ids: [gone.id] }, { reason: 'deleted', at });

    expect(removed.sort((x, y) => x.contractId.localeCompare(y.contractId))).toEqual(
      [
        { ...a, ids: [gone.id] },
        { ...b, ids: [gone.id] },
      ].sort((x, y) => x.contractId.localeCompare(y.contractId)),
    );
    expect(await published(db, a.collectionId)).toBe(1);
    expect(await published(db, b.collectionId)).toBe(0);
    expect(await collectionVersion(db, a.collectionId)).toBeGreaterThan(versionBefore!);
    const row = (await findItem(db, a.collectionId, gone.id))!;
    expect(row.state).toBe('removed');
    expect(row.seq).toBe(await collectionVersion(db, a.collectionId));
    expect(rowToModeratorItem(row)).toMatchObject({ id: gone.id, state: 'removed', removedAt: '2026-11-27T10:00:00.000Z', removedReason: 'deleted' });
    expect(rowToItem(row)).not.toHaveProperty('removedAt');

    // A re-poll still returning it (a lagging timeline) neither stores it again nor updates it.
    const known = await storedItemIds(db, a.collectionId, [gone.id]);
    expect(known.has(gone.id)).toBe(true);
    const edited = { ...gone, text: 'Changed after deletion' };
    expect(await store(db, a, INPUT_A, [], [edited])).toBe(0);
    const after = (await findItem(db, a.collectionId, gone.id))!;
    expect(after.state).toBe('removed');
    expect(rowToModeratorItem(after).text).toBe(gone.text);
    expect(await published(db, a.collectionId)).toBe(1);

    // Removing it again changes nothing.
    expect(await removeItems(db, { service: 'mastodon', ids: [gone.id] }, { reason: 'deleted' })).toEqual([]);
  });

  it('with inputIds removes only what those inputs collected (a feed tombstone)', async () => {
    const { db } = await build();
    const { a, b } = await twoContracts(db);
    const entry = buildItem({ id: 'rss_abc', date: new Date(Date.now() - 60_000).toISOString() });
    await store(db, a, INPUT_A, [entry]);
    await store(db, b, INPUT_B, [entry]);
    const removed = await removeItems(db, { service: 'rss', ids: [entry.id], inputIds: [INPUT_A] }, { reason: 'deleted' });
    expect(removed).toEqual([{ ...a, ids: [entry.id] }]);
    expect((await findItem(db, b.collectionId, entry.id))!.state).toBe('published');
    expect(await removeItems(db, { service: 'rss', ids: [entry.id], inputIds: [] }, { reason: 'deleted' })).toEqual([]);
  });

  it("changes nothing for an unknown id, another service's id, or an id naming another service", async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const item = post('mastodon_social.example:7');
    await store(db, a, INPUT_A, [item]);
    const version = await collectionVersion(db, a.collectionId);
    for (const target of [
      { service: 'mastodon', ids: ['mastodon_social.example:8'] },
      { service: 'bluesky', ids: [item.id] },
      { service: 'mastodon', ids: ['mastodon_', 'bluesky_social.example:7'] },
      { service: 'mastodon', ids: [] },
    ]) {
      expect(await removeItems(db, target, { reason: 'deleted' }), JSON.stringify(target)).toEqual([]);
    }
    expect((await findItem(db, a.collectionId, item.id))!.state).toBe('published');
    expect(await collectionVersion(db, a.collectionId)).toBe(version);
  });

  it('no moderation publishes a removed item again', async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const item = post('mastodon_social.example:9');
    await store(db, a, INPUT_A, [item]);
    await removeItems(db, { service: 'mastodon', ids: [item.id] }, { reason: 'withheld' });
    const audit = { contractId: a.contractId, actor };
    expect(await setItemsState(db, a.collectionId, [item.id], 'published', audit)).toEqual({ removed: [item.id] });
    expect(await changeItem(db, a.collectionId, item.id, { state: 'published' }, audit)).toEqual({ removed: true });
    expect(await changeItem(db, a.collectionId, item.id, { pinned: true }, audit)).toEqual({ removed: true });
    expect((await findItem(db, a.collectionId, item.id))!.state).toBe('removed');
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
    expect(await published(db, collection.id)).toBe(1);
    expect(rowToItem((await findItem(db, collection.id, card.id))!).duplicates?.map((d) => d.id)).toEqual([copy.id, third.id]);

    // The removed duplicate leaves its card: entry and score.
    await removeItems(db, { service: 'mastodon', ids: [third.id] }, { reason: 'deleted' });
    const kept = rowToItem((await findItem(db, collection.id, card.id))!);
    expect(kept.duplicates?.map((d) => d.id)).toEqual([copy.id]);
    expect(kept.kudos.score).toBe(5);
    expect((await findItem(db, collection.id, third.id))!.state).toBe('removed');

    // The removed card: its other copy becomes a published card, and takes the next copy of the story.
    await removeItems(db, { service: 'mastodon', ids: [card.id] }, { reason: 'deleted' });
    expect((await findItem(db, collection.id, copy.id))!.state).toBe('published');
    expect(await published(db, collection.id)).toBe(1);
    const later = { ...post('mastodon_social.example:13'), url: story };
    await store(db, at, INPUT_A, [later]);
    expect(await published(db, collection.id)).toBe(1);
    expect(rowToItem((await findItem(db, collection.id, copy.id))!).duplicates?.map((d) => d.id)).toEqual([later.id]);
    // The removed ones stay known: not collected again.
    expect([...(await storedItemIds(db, collection.id, [card.id, third.id]))].sort()).toEqual([card.id, third.id].sort());
  });

  it('closes up the pins of the collection when a pinned item is removed', async () => {
    const { db } = await build();
    const { a } = await twoContracts(db);
    const items = [post('mastodon_social.example:20'), post('mastodon_social.example:21'), post('mastodon_social.example:22')];
    await store(db, a, INPUT_A, items);
    const audit = { contractId: a.contractId, actor };
    for (const item of items) await changeItem(db, a.collectionId, item.id, { pinned: true }, audit);
    const first = (await findItem(db, a.collectionId, items[0]!.id))!.pinPosition;
    await removeItems(db, { service: 'mastodon', ids: [items[1]!.id] }, { reason: 'protected' });
    const positions = await Promise.all(items.map(async (item) => (await findItem(db, a.collectionId, item.id))!.pinPosition));
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
    await changeItem(db, b.collectionId, item.id, { edit: { text: 'Moderator wording' } }, { contractId: b.contractId, actor });

    const updated = await updateFromSource(db, { ...item, text: 'Second version' });
    expect(updated.map((u) => u.collectionId).sort()).toEqual([a.collectionId, b.collectionId].sort());
    expect(rowToItem((await findItem(db, a.collectionId, item.id))!).text).toBe('Second version');
    const edited = rowToModeratorItem((await findItem(db, b.collectionId, item.id))!);
    expect(edited.text).toBe('Moderator wording');
    expect(edited.original?.text).toBe('Second version');

    // Same content again: nothing changes. Another service's item of the same id: nothing.
    expect(await updateFromSource(db, { ...item, text: 'Second version' })).toEqual([]);
    expect(await updateFromSource(db, { ...item, service: 'bluesky', text: 'Hostile' })).toEqual([]);

    await removeItems(db, { service: 'mastodon', ids: [other.id] }, { reason: 'deleted' });
    expect(await updateFromSource(db, { ...other, text: 'After removal' })).toEqual([]);
    expect(rowToModeratorItem((await findItem(db, a.collectionId, other.id))!).text).toBe(other.text);
  });
});
