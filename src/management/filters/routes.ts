/**
 * The filter dry run on {api_url} (issue 5; docs/api.md#filter-dry-run, docs/filters.md#dry-run):
 *
 *   POST /collection/filters/test  {contractId, filterId | set, items: [content items]}
 *                               or {contractId, filterId | set, collectionId, since?}
 *     → 200 {results: [{id, accepted, set, rule, reason}], hits: [{set: {id, name}, rule, count}]}
 *   GET  /collection/filters/operators
 *     → 200 {operators: [{operator, value, list}], fields: [{field, kind, aliasOf}], listTypes}
 *
 * Judges the items with the filter (a set or chain of the contract, compiled as the collector
 * compiles it, inactive parts left out) at the time of the request, and changes nothing.
 * Instead of `filterId`, `set` is a set not saved ({name?, rules, preCondition, or?}), checked as
 * a saved set is (rule table, lists of the contract by id; problems named `set.rules[2].value`),
 * so a client can preview a set before saving it; results name it with `id: null`. With
 * `collectionId` it re-judges the collection's stored items dated after `since` (Unix seconds,
 * default 0), the newest 1000. At most 1000 items per request. `hits` counts the rejections per
 * set and rule, most first. `set`, `rule` and `reason` are null for accepted items.
 *
 * authenticate → validate (400 naming the property) → contract grant (403) → filter and
 * collection of that contract (404 unknown, 403 other contract) → judge in the filter pool
 * (dry-run.ts: 400 naming filterId when the stored filter cannot compile or runs over its budget).
 */
import type { Config } from '../../config.ts';
import { type Invalid, notFoundError, VALIDATION_CODES, validationError } from '../../errors.ts';
import type { Decision } from '../../filter/engine.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import type { Db } from '../../store/db.ts';
import { contractLists, loadFilter } from '../../store/filter-sources.ts';
import { ruleTable } from '../../filter/rules.ts';
import { checkSet } from '../sets/schema.ts';
import { storedItemsSince } from '../../store/items.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { TokenQuery } from '../docs.ts';
import { COLLECTION, FILTER, owned } from '../ownership.ts';
import { judgeDryRun } from './dry-run.ts';
import { FilterTest, FilterTestResult, MAX_ITEMS, RuleTable } from './schema.ts';

const operatorsSchema = {
  tags: ['filters'],
  summary: 'The rule table: operators with the value and list they take, and the fields rules may test',
  security: TOKEN_SECURITY,
  querystring: TokenQuery,
  response: { 200: RuleTable, ...errorResponses(401) },
};

const schema = {
  tags: ['filters'],
  summary: 'Dry run: judge items with a filter, changing nothing',
  security: TOKEN_SECURITY,
  querystring: TokenQuery,
  body: handlerValidated(FilterTest),
  response: { 200: FilterTestResult, ...errorResponses(400, 401, 403, 404, 413) },
};

/** The rules a schema cannot say: filterId xor set, items xor collectionId, items with ids. */
function invalidOf(test: FilterTest): Invalid[] {
  if ((test.filterId === undefined) === (test.set === undefined)) {
    return [{ propertyName: 'filterId', message: 'send either filterId or set', code: VALIDATION_CODES.required }];
  }
  if ((test.items === undefined) === (test.collectionId === undefined)) {
    return [{ propertyName: 'items', message: 'send either items or collectionId', code: VALIDATION_CODES.required }];
  }
  if (test.since !== undefined && test.collectionId === undefined) return [{ propertyName: 'since', message: 'since goes with collectionId', propertyValue: test.since }];
  const invalid: Invalid[] = [];
  (test.items ?? []).forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) invalid.push({ propertyName: `items[${i}]`, message: `items[${i}] must be an object (a content item)` });
    else if (typeof (item as { id?: unknown }).id !== 'string') {
      invalid.push({ propertyName: `items[${i}].id`, message: `items[${i}].id must be a string`, propertyValue: (item as { id?: unknown }).id, code: VALIDATION_CODES.required });
    }
  });
  return invalid;
}

export function filterRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.post('/collection/filters/test', { schema }, async (request) => {
    const principal = await authenticate(db, request);
    const body = check(FilterTest, request.body);
    const invalid = invalidOf(body);
    if (invalid.length) throw validationError(invalid);
    await requireContractAccess(db, principal, body.contractId);
    if (body.filterId) await owned(db, FILTER, body.filterId, body.contractId, 'filterId');
    else await checkSet(db, body.contractId, body.set!, undefined, 'set.');
    if (body.collectionId) await owned(db, COLLECTION, body.collectionId, body.contractId, 'collectionId');
    const loaded = body.filterId ? await loadFilter(db, body.contractId, body.filterId) : await unsaved(db, body.contractId, body.set!);
    if (!loaded) throw notFoundError(`No filter set or chain ${body.filterId}.`, 'filterId', body.filterId);
    const items = (body.items as { id: string }[] | undefined) ?? (await storedItemsSince(db, body.contractId, body.collectionId!, (body.since ?? 0) * 1000, MAX_ITEMS));
    const decisions = await judgeDryRun(db, body, loaded, items, Date.now());
    const results = items.map((item, i) => present(item.id, decisions[i]!));
    return { results, hits: hitsOf(results) };
  });

  app.get('/collection/filters/operators', { schema: operatorsSchema }, async (request) => {
    await authenticate(db, request);
    return ruleTable();
  });
}

/** The dry run's unsaved set (id '' until presented as null) with the contract's lists, ready for `compile`. */
async function unsaved(db: Db, contractId: string, set: NonNullable<FilterTest['set']>) {
  const source = { kind: 'set' as const, set: { id: '', name: set.name ?? 'unsaved set', rules: set.rules, preCondition: set.preCondition, or: set.or === true, active: true } };
  return { source, lists: await contractLists(db, contractId) };
}

type Result = ReturnType<typeof present>;

function present(id: string, decision: Decision) {
  return decision.accepted
    ? { id, accepted: true, set: null, rule: null, reason: null }
    : { id, accepted: false, set: { id: decision.set.id || null, name: decision.set.name }, rule: decision.rule as number | null, reason: decision.reason as string | null };
}

/** Rejections per set and rule, most first (ties: set name, then rule). */
function hitsOf(results: Result[]) {
  const hits = new Map<string, { set: { id: string | null; name: string }; rule: number; count: number }>();
  for (const result of results) {
    if (result.accepted || !result.set) continue;
    const key = `${result.set.id}/${result.rule}`;
    const hit = hits.get(key) ?? { set: result.set, rule: result.rule!, count: 0 };
    hit.count += 1;
    hits.set(key, hit);
  }
  return [...hits.values()].sort((a, b) => b.count - a.count || a.set.name.localeCompare(b.set.name) || a.rule - b.rule);
}
