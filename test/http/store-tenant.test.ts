/**
 * The tenant in every store query, as an attack (docs/architecture.md#tenant-in-every-query,
 * issue 31 point 2): a caller that forgot `owned()` and passed its own contract (B) with another
 * contract's (A) record id gets nothing and changes nothing. Contract A's records are made
 * through the HTTP API on a real database; each store function is then called with B's contract
 * id and A's record id, and A's records are read back unchanged. Table-driven over the store
 * functions; runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { findArticleById, recordArticleRead, removeArticle, ensureArticle } from '../../src/store/articles.ts';
import { changedSince, findAuditEntry, markReverted } from '../../src/store/audit.ts';
import { findCollection, findPublicationSettings, setDisplayState, streamMarks } from '../../src/store/collections.ts';
import { changeCredentialLocked, findCredential, markCredentialFailed, markCredentialUsed } from '../../src/store/credentials.ts';
import type { Db } from '../../src/store/db.ts';
import { findFilter } from '../../src/store/filters.ts';
import { claimInput, findInput, findInputs, inputUnchanged, recordPollFailure, recordPollSuccess, recordPushed, releaseSlot, takePollNowTurn, updateInput } from '../../src/store/inputs.ts';
import { findJob } from '../../src/store/jobs.ts';
import { findDelivery, listDeliveries, parkDeliveries, resendDelivery, wakeDeliveries } from '../../src/store/outbox.ts';
import { recordQuotaWait } from '../../src/store/quotas.ts';
import { deleteRecords, findRecord, findRecords, updateRecord } from '../../src/store/records.ts';
import { build, buildTenant } from '../helper.ts';

/** Contract A's records, made through the API, and B's contract id. */
async function setup() {
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
  const a = await buildTenant(ctx.db, 'Owner Corp');
  const b = await buildTenant(ctx.db, 'Intruder Inc');
  const create = async (path: string, body: Record<string, unknown>) => {
    const res = await ctx.app.inject({ method: 'POST', url: path, payload: body, headers: { authorization: `Bearer ${a.token}` } });
    expect(res.statusCode, `${path}: ${res.body}`).toBe(201);
    return res.json() as { _id: string };
  };
  const mine = a.contract.id;
  const collection = await create('/collection/collections', { name: 'Sports', contractId: mine });
  const input = await create('/collection/inputs', { service: 'rss', type: 'feed', input: 'http://127.0.0.1:9/feed', contractId: mine, collectionId: collection._id });
  const list = await create('/collection/lists', { name: 'Bad words', contractId: mine, type: 'strings', entries: ['spam'] });
  const set = await create('/collection/sets', { name: 'Spam', contractId: mine, rules: [{ operator: 'equals', field: 'service', value: 'rss', not: false }], preCondition: { operator: 'exists', field: 'text', not: false } });
  const chain = await create('/collection/chains', { name: 'Main', contractId: mine, sets: [set._id] });
  const customization = await create('/publication/customizations', { name: 'Dark', contractId: mine, type: 'css', data: 'body{color:#000}' });
  const credential = await create('/collection/credentials', { contractId: mine, name: 'X account', service: 'twitter', bearerToken: 'secret-bearer' });
  const webhook = await create('/collection/webhooks', { name: 'CRM', contractId: mine, url: 'http://127.0.0.1:9/hook', events: ['item.published'] });
  const article = await ensureArticle(ctx.db, mine, 'https://news.example/story');
  // An audit entry of A (the collection's creation) that lists an item gone since: A's own changedSince names it.
  const audit = await ctx.db.selectFrom('auditEntries').select('id').where('contractId', '=', mine).where('resourceId', '=', collection._id).executeTakeFirstOrThrow();
  await ctx.db.insertInto('auditItems').values({ entryId: audit.id, collectionId: collection._id, itemId: 'gone-item', before: 'unpublished', after: 'published' }).execute();
  const ids = { collection: collection._id, input: input._id, list: list._id, set: set._id, chain: chain._id, customization: customization._id, credential: credential._id, webhook: webhook._id, article: article.id, audit: audit.id };
  return { db: ctx.db, mine, theirs: b.contract.id, ids };
}

type Ids = Awaited<ReturnType<typeof setup>>['ids'];

/** Everything of contract A the attacks could reach, read with A's own contract. */
async function snapshot(db: Db, mine: string, ids: Ids) {
  return {
    collection: await findCollection(db, mine, ids.collection),
    input: await findInput(db, mine, ids.input),
    list: await findRecord(db, 'filterLists', mine, ids.list),
    set: await findRecord(db, 'filterSets', mine, ids.set),
    chain: await findRecord(db, 'filterChains', mine, ids.chain),
    customization: await findRecord(db, 'customizations', mine, ids.customization),
    credential: await findCredential(db, mine, ids.credential),
    webhook: await findRecord(db, 'webhooks', mine, ids.webhook),
    article: await findArticleById(db, mine, ids.article),
    audit: await findAuditEntry(db, mine, ids.audit),
  };
}

/** One attack: a store call with B's contract and A's record id, and what it must answer (nothing). */
type Attack = [name: string, run: (db: Db, theirs: string, ids: Ids) => Promise<unknown>, nothing: unknown];

const NOW = Date.now();
const ATTACKS: Attack[] = [
  ['findInput', (db, theirs, ids) => findInput(db, theirs, ids.input), undefined],
  ['findInputs', (db, theirs, ids) => findInputs(db, theirs, [ids.input]), []],
  ['updateInput', (db, theirs, ids) => updateInput(db, theirs, ids.input, { input: 'http://127.0.0.1:9/theirs', active: 0 }), undefined],
  ['takePollNowTurn (then the turn is still free for A)', (db, theirs, ids) => takePollNowTurn(db, theirs, ids.input, NOW, 60_000).then((wait) => wait > 0), true],
  ['claimInput', (db, theirs, ids) => claimInput(db, theirs, ids.input, NOW, 60_000, 2), { busy: 'input' }],
  ['recordPushed', (db, theirs, ids) => db.transaction().execute((trx) => recordPushed(trx, theirs, ids.input, { added: 5, rejected: 1, at: NOW })), false],
  ['recordPollFailure (input of another contract)', async (db, theirs, ids) => recordPollFailure(db, { ...(await findInput(db, (await ownerOfInput(db, ids))!, ids.input))!, contractId: theirs }, { lastRun: new Date(NOW).toISOString(), lastError: 'forged', failures: 9, nextRunAt: NOW + 1e9 }), false],
  ['recordPollSuccess (input of another contract)', async (db, theirs, ids) => recordPollSuccess(db, { ...(await findInput(db, (await ownerOfInput(db, ids))!, ids.input))!, contractId: theirs }, { sourceState: '{"forged":true}', lastRun: '', lastSuccess: '', nextRunAt: 0, collected: 100, rejected: 0, warnings: '[]' }), false],
  ['inputUnchanged (input of another contract)', async (db, theirs, ids) => {
    const held = { ...(await findInput(db, (await ownerOfInput(db, ids))!, ids.input))!, contractId: theirs };
    return db.transaction().execute((trx) => inputUnchanged(trx, held));
  }, false],
  ['recordQuotaWait (input of another contract)', async (db, theirs, ids) => recordQuotaWait(db, { ...(await findInput(db, (await ownerOfInput(db, ids))!, ids.input))!, contractId: theirs }, { lastError: 'forged', nextRunAt: NOW + 1e9 }), undefined],
  ['releaseSlot (input of another contract)', (db, theirs, ids) => releaseSlot(db, { id: ids.input, contractId: theirs, claimedUntil: 0 }), undefined],
  ['findCollection', (db, theirs, ids) => findCollection(db, theirs, ids.collection), undefined],
  ['findPublicationSettings', (db, theirs, ids) => findPublicationSettings(db, theirs, ids.collection), {}],
  ['setDisplayState', (db, theirs, ids) => db.transaction().execute((trx) => setDisplayState(trx, theirs, ids.collection, 'blank')), undefined],
  ['findRecord (list)', (db, theirs, ids) => findRecord(db, 'filterLists', theirs, ids.list), undefined],
  ['findRecord (customization)', (db, theirs, ids) => findRecord(db, 'customizations', theirs, ids.customization), undefined],
  ['findRecord (webhook)', (db, theirs, ids) => findRecord(db, 'webhooks', theirs, ids.webhook), undefined],
  ['findRecords (sets)', (db, theirs, ids) => findRecords(db, 'filterSets', theirs, [ids.set]), []],
  ['updateRecord (chain)', (db, theirs, ids) => updateRecord(db, 'filterChains', theirs, ids.chain, { name: 'Taken', active: 0 }), undefined],
  ['deleteRecords (list)', (db, theirs, ids) => db.transaction().execute((trx) => deleteRecords(trx, 'filterLists', theirs, [ids.list])), undefined],
  ['findFilter (set)', (db, theirs, ids) => findFilter(db, theirs, ids.set), undefined],
  ['findFilter (chain)', (db, theirs, ids) => findFilter(db, theirs, ids.chain), undefined],
  ['findCredential', (db, theirs, ids) => findCredential(db, theirs, ids.credential), undefined],
  ['markCredentialUsed', (db, theirs, ids) => markCredentialUsed(db, theirs, ids.credential, new Date(NOW).toISOString()), undefined],
  ['markCredentialFailed', (db, theirs, ids) => markCredentialFailed(db, theirs, ids.credential, 'forged'), false],
  ['changeCredentialLocked', (db, theirs, ids) => changeCredentialLocked(db, theirs, ids.credential, async () => ({ name: 'Taken' })), undefined],
  ['listDeliveries', (db, theirs, ids) => listDeliveries(db, theirs, ids.webhook, 100), []],
  ['findDelivery', (db, theirs, ids) => findDelivery(db, theirs, ids.webhook, '1'), undefined],
  ['resendDelivery', (db, theirs, ids) => resendDelivery(db, theirs, ids.webhook, '1', NOW), false],
  ['parkDeliveries / wakeDeliveries', (db, theirs, ids) => db.transaction().execute(async (trx) => (await parkDeliveries(trx, theirs, ids.webhook, NOW), await wakeDeliveries(trx, theirs, ids.webhook, NOW))), undefined],
  ['findArticleById', (db, theirs, ids) => findArticleById(db, theirs, ids.article), undefined],
  ['recordArticleRead', (db, theirs, ids) => recordArticleRead(db, theirs, ids.article, { title: 'Forged', text: 'forged', count: 99 }), undefined],
  ['removeArticle', (db, theirs, ids) => removeArticle(db, theirs, ids.article), false],
  ['findAuditEntry', (db, theirs, ids) => findAuditEntry(db, theirs, ids.audit), undefined],
  ['changedSince', (db, theirs, ids) => changedSince(db, theirs, ids.audit), []],
  ['markReverted', (db, theirs, ids) => db.transaction().execute((trx) => markReverted(trx, theirs, ids.audit, ids.audit)), false],
  ['streamMarks', (db, theirs, ids) => streamMarks(db, theirs, ids.collection), undefined],
  ['findJob (a record id of another kind: none)', (db, theirs, ids) => findJob(db, theirs, ids.input), undefined],
];

/** The contract owning the input (A): the attacks forge only the contract of a row they hold. */
async function ownerOfInput(db: Db, ids: Ids): Promise<string | undefined> {
  return (await db.selectFrom('inputs').select('contractId').where('id', '=', ids.input).executeTakeFirst())?.contractId;
}

describe("a store call with another contract's id reads and changes nothing", () => {
  it.each(ATTACKS)('%s', async (_name, run, nothing) => {
    const { db, mine, theirs, ids } = await setup();
    const before = await snapshot(db, mine, ids);
    // Each of A's records is there for its own contract (the happy path).
    for (const [kind, row] of Object.entries(before)) expect(row, kind).toMatchObject({ contractId: mine });
    expect(await run(db, theirs, ids)).toEqual(nothing);
    expect(await snapshot(db, mine, ids)).toEqual(before);
  });

  it('and the same calls with the owning contract do reach the records (the attack is only the contract)', async () => {
    const { db, mine, ids } = await setup();
    expect(await findInputs(db, mine, [ids.input])).toHaveLength(1);
    await updateInput(db, mine, ids.input, { active: 0 });
    expect((await findInput(db, mine, ids.input))!.active).toBe(0);
    expect(await markCredentialFailed(db, mine, ids.credential, 'revoked')).toBe(true);
    expect(await db.transaction().execute((trx) => setDisplayState(trx, mine, ids.collection, 'blank'))).toBe('live');
    expect(await removeArticle(db, mine, ids.article)).toBe(true);
    expect(await changedSince(db, mine, ids.audit)).toEqual(['gone-item']);
    expect(await streamMarks(db, mine, ids.collection)).toEqual({ version: 0, displayState: 'blank' });
    expect(await db.transaction().execute((trx) => markReverted(trx, mine, ids.audit, ids.audit))).toBe(true);
  });
});
