import type { Kysely } from 'kysely';
import type { LooseDatabase } from './tables.ts';
import { describe, expect, it } from 'vitest';
import { buildItem, buildTenant, buildUser, freshDatabaseUrl, seedItems } from '../../test/helper.ts';
import { SPACE_KEYS } from '../lib/simhash.ts';
import { openDb } from './db.ts';
import { findItems } from './items/find.ts';
import { listItemKeys } from './items/read-sql.ts';
import { rowToItem } from './items/rows.ts';
import { ensureSchema, MIGRATIONS, migrateToLatest, schemaState } from './migrate.ts';
import * as readSeq from './migrations/2026-12-01-read-seq.ts';
import * as webhookFairClaims from './migrations/2026-12-02-webhook-fair-claims.ts';
import * as publicationSettings from './migrations/2026-12-03-publication-settings.ts';
import { findPublicationSettings, streamMarks } from './collections.ts';
import * as rolesScopes from './migrations/2026-12-04-roles-scopes.ts';
import * as displayState from './migrations/2026-12-06-display-state.ts';
import { grant } from './contracts.ts';
import * as itemSearch from './migrations/2026-12-06-item-search.ts';
import { searchItemKeys } from './item-search.ts';
import { parseSearch } from '../lib/search-query.ts';
import * as pinsEdits from './migrations/2026-12-07-pins-edits.ts';
import * as inputTitle from './migrations/2026-12-11-input-title.ts';
import * as customizationCollection from './migrations/2026-12-19-customization-collection.ts';
import { hasIndexColumn } from './migrations/2026-11-29-trending.ts';

describe('schema migrations', () => {
  it('migrates an empty database and then reports it current', async () => {
    const db = openDb(await freshDatabaseUrl());
    expect((await schemaState(db)).state).toBe('empty');
    await ensureSchema(db);
    expect((await schemaState(db)).state).toBe('current');
    expect(await migrateToLatest(db)).toEqual([]);
    await db.destroy();
  });

  it('refuses a database newer than the code', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    await db.insertInto('schema_migrations' as never).values({ name: '2099-01-01-future', timestamp: new Date().toISOString() } as never).execute();
    expect((await schemaState(db)).state).toBe('ahead');
    await expect(ensureSchema(db)).rejects.toThrow(/newer/);
    await expect(migrateToLatest(db)).rejects.toThrow(/upgrade Sluice/);
    await db.destroy();
  });

  it('refuses to serve a database older than the code until it is migrated', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const last = MIGRATIONS.at(-1)!;
    // As if the database was made by the previous version, which lacked the last migration
    // (migrations are written to be idempotent, so the last one can run again).
    await db.deleteFrom('schema_migrations' as never).where('name' as never, '=', last as never).execute();
    expect((await schemaState(db)).state).toBe('behind');
    await expect(ensureSchema(db)).rejects.toThrow(/older.*sluice migrate/);
    expect(await migrateToLatest(db)).toEqual([last]);
    expect((await schemaState(db)).state).toBe('current');
    await db.destroy();
  });

  it('moves the fingerprint rows of cards indexed by their whole text to the second space (2026-11-30-print-spaces)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    await db.updateTable('collections').set({ dedupe: 'url+text' }).where('id', '=', tenant.collection.id).execute();
    const date = new Date().toISOString();
    const titled = buildItem({ id: 'rss_titled', title: 'Scientists find a new species of deep sea octopus', text: 'Filmed at a depth of 4000 metres', url: 'https://example.com/a', date });
    const untitled = buildItem({ id: 'mastodon_1', service: 'mastodon', type: 'status', title: undefined, text: '<p>Council approves the new budget for road repairs next year</p>', url: 'https://mastodon.social/@a/1', date });
    expect(await seedItems(db, tenant, [titled, untitled])).toBe(2);
    const rows = async () =>
      (await db.selectFrom('itemPrints').select(['itemId', 'bandKey']).where('collectionId', '=', tenant.collection.id).orderBy('itemId').orderBy('bandKey').execute()).map((row) => [row.itemId, Math.floor(Number(row.bandKey) / SPACE_KEYS)]);
    const current = await rows();
    expect(current).toEqual([...Array(4).fill(['mastodon_1', 1]), ...Array(4).fill(['rss_titled', 0])]);
    // As a database of the previous version held them: every row in the first space.
    await db.updateTable('itemPrints').set((eb) => ({ bandKey: eb('bandKey', '-', SPACE_KEYS) })).where('bandKey', '>=', SPACE_KEYS).execute();
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-11-30-print-spaces'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    expect(await rows()).toEqual(current);
    // Again: nothing moves twice.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(await rows()).toEqual(current);
    await db.destroy();
  });

  it('gives every read index the item seq, so that a page\'s keys come from the index alone (2026-12-01-read-seq)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    expect(await seedItems(db, tenant, [buildItem({ id: 'rss_1' }), buildItem({ id: 'rss_2' })])).toBe(2);
    const indexes = ['items_read_state_time', 'items_read_time', 'items_read_state_kudos', 'items_read_kudos', 'items_read_state_trend', 'items_read_trend', 'items_read_location'];
    const withSeq = async () => (await Promise.all(indexes.map((name) => hasIndexColumn(db, name, 'seq')))).every(Boolean);
    expect(await withSeq()).toBe(true);
    // As the previous version left them: without seq.
    await readSeq.down(db);
    expect(await withSeq()).toBe(false);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-01-read-seq'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    expect(await withSeq()).toBe(true);
    const now = Date.now();
    const keys = await listItemKeys(db, { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: now - 86_400_000, untilMs: now + 60_000, state: 'published' }, { count: 20, offset: 0, sort: 'time', order: 'desc' });
    expect(keys.map((key) => key.id).sort()).toEqual(['rss_1', 'rss_2']);
    expect(keys.every((key) => key.collectionId === tenant.collection.id && Number(key.seq) > 0 && key.state === 'published')).toBe(true);
    await db.destroy();
  });

  it('claims webhook deliveries through per-webhook indexes instead of the global due one, and runs again unchanged (2026-12-02-webhook-fair-claims)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const indexes = async () => [
      await hasIndexColumn(db, 'webhook_outbox_webhook_due', 'next_attempt_at'),
      await hasIndexColumn(db, 'webhook_outbox_claimed', 'claimed_until'),
      await hasIndexColumn(db, 'webhook_outbox_due', 'next_attempt_at'),
    ];
    expect(await indexes()).toEqual([true, true, false]);
    // As the previous version left them.
    await webhookFairClaims.down(db);
    expect(await indexes()).toEqual([false, false, true]);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-02-webhook-fair-claims'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    expect(await indexes()).toEqual([true, true, false]);
    // Again: nothing changes.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(await indexes()).toEqual([true, true, false]);
    await db.destroy();
  });

  it('gives collections an empty publication column, keeping their rows, and runs again unchanged (2026-12-03-publication-settings)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    // As the previous version left the table, with a collection in it.
    await publicationSettings.down(db);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-03-publication-settings'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    const row = await db.selectFrom('collections').select(['name', 'publication']).where('id', '=', tenant.collection.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: tenant.collection.name, publication: null });
    expect(await findPublicationSettings(db, tenant.contract.id, tenant.collection.id)).toEqual({});
    await db.updateTable('collections').set({ publication: JSON.stringify({ language: 'nl' }) }).execute();
    // Again: nothing changes, the settings stay.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(await findPublicationSettings(db, tenant.contract.id, tenant.collection.id)).toEqual({ language: 'nl' });
    await db.destroy();
  });

  it('makes every existing grant owner, and gives existing clients and tokens every scope (2026-12-04-roles-scopes)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    const user = await buildUser(db);
    await grant(db, user.consumer.id, tenant.contract.id, undefined, 'viewer');
    // As the previous version left the database: no roles, no scopes.
    await rolesScopes.down(db);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-04-roles-scopes'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    const all = 'queue:read queue:moderate manage:read manage:write credentials team';
    expect((await db.selectFrom('grants').select('role').execute()).map((row) => row.role)).toEqual(['owner', 'owner']);
    const consumers = await db.selectFrom('consumers').select(['type', 'scopes']).execute();
    expect(consumers.filter((row) => row.type === 'client').map((row) => row.scopes)).toEqual([all, all]); // the console's and the tenant's
    expect(consumers.filter((row) => row.type === 'user').map((row) => row.scopes)).toEqual([null]);
    expect((await db.selectFrom('tokens').select('scope').execute()).map((row) => row.scope)).toEqual([all, all]);
    // Again: idempotent, nothing changes.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect((await db.selectFrom('grants').select('role').execute()).map((row) => row.role)).toEqual(['owner', 'owner']);
    await db.destroy();
  });

  it('gives collections a display state, live for the existing ones, and runs again unchanged (2026-12-06-display-state)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    await displayState.down(db);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-06-display-state'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    expect(await streamMarks(db, tenant.contract.id, tenant.collection.id)).toEqual({ version: 0, displayState: 'live' });
    await db.updateTable('collections').set({ displayState: 'blank' }).execute();
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect((await streamMarks(db, tenant.contract.id, tenant.collection.id))?.displayState).toBe('blank');
    await db.destroy();
  });

  it('indexes the items stored before it for search, and runs again unchanged (2026-12-06-item-search)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    // As the previous version left the database: items, no index.
    await itemSearch.down(db);
    await seedItems(db, tenant, [buildItem({ id: 'rss_old', title: 'Harbour festival', text: 'Un café au port' })]);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-06-item-search'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    const query = { contractId: tenant.contract.id, collectionId: tenant.collection.id, sinceMs: 0, untilMs: Date.now() + 60_000 };
    const page = { count: 20, offset: 0, order: 'desc', sort: 'relevance' } as const;
    const found = async (words: string) => (await searchItemKeys(db, query, page, parseSearch(words))).map((key) => key.id);
    expect(await found('cafe harbour')).toEqual(['rss_old']);
    // Again: nothing changes; new items are indexed as they come.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    await seedItems(db, tenant, [buildItem({ id: 'rss_new', title: 'Harbour lights' })]);
    expect((await found('harbour')).sort()).toEqual(['rss_new', 'rss_old']);
    await db.destroy();
  });

  it('gives items an empty pin and moderation and the pinned index, keeping their rows, and runs again unchanged (2026-12-07-pins-edits)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    // As the previous version left the table, with an item in it.
    await pinsEdits.down(db);
    await seedItems(db, tenant, [buildItem({ id: 'rss_before', title: 'Stored before' })]);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-07-pins-edits'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    const [row] = await findItems(db, tenant.contract.id, tenant.collection.id, ['rss_before']);
    expect(row).toMatchObject({ pinPosition: null, moderation: null });
    expect(rowToItem(row!)).toMatchObject({ id: 'rss_before', title: 'Stored before', pinned: false });
    await db.updateTable('items').set({ pinPosition: 1 }).execute();
    // Again: nothing changes, the pin stays.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(rowToItem((await findItems(db, tenant.contract.id, tenant.collection.id, ['rss_before']))[0]!)).toMatchObject({ pinned: true, position: 1 });
    await db.destroy();
  });

  it('gives inputs an empty title and poll-now turn, keeping their rows, and runs again unchanged (2026-12-11-input-title)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    await inputTitle.down(db);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-11-input-title'));
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    const now = Date.now();
    await db.insertInto('inputs').values({
      id: 'i'.repeat(24), contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'rss', type: 'feed', input: 'https://example.org/feed',
      filterId: null, credentialId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, pollInterval: null,
      created: new Date(now).toISOString(), createdBy: 'test', lastModified: new Date(now).toISOString(), lastModifiedBy: 'test',
      sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null, nextRunAt: now, failures: 0, collected: 0, rejected: 0,
    }).execute();
    expect(await db.selectFrom('inputs').select(['sourceTitle', 'pollNowAt']).executeTakeFirstOrThrow()).toEqual({ sourceTitle: null, pollNowAt: null });
    await db.updateTable('inputs').set({ sourceTitle: 'Wire', pollNowAt: now }).execute();
    // Again: nothing changes, the title stays.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(await db.selectFrom('inputs').select(['sourceTitle', 'pollNowAt']).executeTakeFirstOrThrow()).toEqual({ sourceTitle: 'Wire', pollNowAt: now });
    await db.destroy();
  });

  it('gives customizations and their versions an empty collection, keeping their rows, and runs again unchanged (2026-12-19-customization-collection)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    await customizationCollection.down(db);
    const since = MIGRATIONS.slice(MIGRATIONS.indexOf('2026-12-19-customization-collection'));
    const at = new Date().toISOString();
    const row = { id: 'c'.repeat(24), contractId: tenant.contract.id, name: 'Brand', type: 'css', data: '.a{}', version: '1', description: null, active: 1, created: at, createdBy: 'test', lastModified: at, lastModifiedBy: 'test' };
    await (db as unknown as Kysely<LooseDatabase>).insertInto('customizations').values(row).execute();
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    expect(await migrateToLatest(db)).toEqual(since);
    expect(await db.selectFrom('customizations').select(['name', 'collectionId']).executeTakeFirstOrThrow()).toEqual({ name: 'Brand', collectionId: null });
    await db.updateTable('customizations').set({ collectionId: tenant.collection.id }).execute();
    // Again: nothing changes, the collection stays.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', since as never).execute();
    await migrateToLatest(db);
    expect(await db.selectFrom('customizations').select(['name', 'collectionId']).executeTakeFirstOrThrow()).toEqual({ name: 'Brand', collectionId: tenant.collection.id });
    expect(await db.selectFrom('customizationVersions').select('collectionId').execute()).toEqual([]);
    await db.destroy();
  });
});
