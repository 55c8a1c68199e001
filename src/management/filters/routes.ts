/**
 * The filter dry run on {api_url} (issue 5; docs/api.md#filter-dry-run, docs/filters.md#dry-run):
 *
 *   POST /collection/filters/test  {contractId, filterId | set, items: [content items]}
 *                               or {contractId, filterId | set, collectionId, since?}
 *     → 200 {results: [{id, accepted, action, set, rule, reason, title, date, inputId}], hits: [{set: {id, name}, rule, action, count}]}
 *   POST /collection/filters/apply {contractId, filterId | set, collectionId, since?, until?, dryRun?}
 *     → 200 {judged, rejected, unpublished, hits, auditId[, wouldUnpublish]} (up to APPLY_IN_REQUEST items), else
 *       202 the job (Location /collection/jobs/{id}) that does it (apply.ts; docs/api.md#apply-a-filter)
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
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { check, handlerValidated } from '../../http/validate.ts';
import type { Db } from '../../store/db.ts';
import { loadFilter } from '../../store/filter-sources.ts';
import { ruleTable } from '../../filter/rules.ts';
import { checkSet } from '../sets/schema.ts';
import { storedItemsSince } from '../../store/items/find.ts';
import { countItems } from '../../store/items/read-sql.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { TokenQuery } from '../schemas.ts';
import { COLLECTION, FILTER, owned } from '../ownership.ts';
import { hitsOf, judgeDryRun, presentDecision, storyOf, unsavedFilter } from './dry-run.ts';
import { APPLY_IN_REQUEST, ApplyResult, FilterApply, FilterTest, FilterTestResult, Job, MAX_ITEMS, RuleTable } from './schema.ts';
import { applyFilter, type ApplyParams } from './apply.ts';
import { jobRunner } from '../jobs/runner.ts';
import { presentJob } from '../jobs/routes.ts';
import { actorOf } from '../resource.ts';
import { createJob, findJob } from '../../store/jobs.ts';

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

const applySchema = {
  tags: ['filters'],
  summary: "Apply a filter to a collection's stored items: unpublish what it rejects (one revertable audit entry)",
  security: TOKEN_SECURITY,
  querystring: TokenQuery,
  body: handlerValidated(FilterApply),
  response: {
    200: { ...ApplyResult, description: `up to ${APPLY_IN_REQUEST} items: applied in the request` },
    202: { ...Job, description: `more than ${APPLY_IN_REQUEST} items: a job (Location: /collection/jobs/{id})` },
    ...errorResponses(400, 401, 403, 404, 413),
  },
};

/** The job kind of a filter application. */
const APPLY_JOB = 'filter-apply';

/** Registers the module's routes on `app` (see the module's description). */
export function filterRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  app.post('/collection/filters/test', { schema }, async (request) => {
    const principal = await authenticate(db, request);
    const body = check(FilterTest, request.body);
    const invalid = invalidOf(body);
    if (invalid.length) throw validationError(invalid);
    await requireContractAccess(db, principal, body.contractId);
    if (body.filterId) await owned(db, FILTER, body.filterId, body.contractId, 'filterId');
    else await checkSet(db, body.contractId, body.set!, undefined, 'set.');
    if (body.collectionId) await owned(db, COLLECTION, body.collectionId, body.contractId, 'collectionId');
    const loaded = body.filterId ? await loadFilter(db, body.contractId, body.filterId) : await unsavedFilter(db, body.contractId, body.set!);
    if (!loaded) throw notFoundError(`No filter set or chain ${body.filterId}.`, 'filterId', body.filterId);
    const judged = body.items
      ? (body.items as { id: string }[]).map((item) => ({ item, inputId: null }))
      : await storedItemsSince(db, body.contractId, body.collectionId!, (body.since ?? 0) * 1000, MAX_ITEMS);
    const decisions = await judgeDryRun(db, body, loaded, judged.map((entry) => entry.item), Date.now());
    const results = judged.map(({ item, inputId }, i) => ({ ...presentDecision(item.id, decisions[i]!), ...storyOf(item, inputId) }));
    return { results, hits: hitsOf(results) };
  });

  const runner = jobRunner(app, { db, config });
  runner.handle(APPLY_JOB, async (job, progress) => {
    await applyFilter(db, JSON.parse(job.params) as ApplyParams, Number(job.total), progress, job.id);
  });

  app.post('/collection/filters/apply', { schema: applySchema }, async (request, reply) => {
    const principal = await authenticate(db, request);
    const body = check(FilterApply, request.body);
    const invalid: Invalid[] = [];
    if ((body.filterId === undefined) === (body.set === undefined)) invalid.push({ propertyName: 'filterId', message: 'send either filterId or set', code: VALIDATION_CODES.required });
    if (body.since !== undefined && body.until !== undefined && body.until < body.since) {
      invalid.push({ propertyName: 'until', message: 'until must not be before since', propertyValue: body.until, code: VALIDATION_CODES.range });
    }
    if (invalid.length) throw validationError(invalid);
    await requireContractAccess(db, principal, body.contractId);
    if (body.filterId) await owned(db, FILTER, body.filterId, body.contractId, 'filterId');
    else await checkSet(db, body.contractId, body.set!, undefined, 'set.');
    await owned(db, COLLECTION, body.collectionId, body.contractId, 'collectionId');
    const params: ApplyParams = {
      contractId: body.contractId,
      collectionId: body.collectionId,
      ...(body.filterId ? { filterId: body.filterId } : { set: body.set! }),
      sinceMs: (body.since ?? 0) * 1000,
      untilMs: body.until !== undefined ? body.until * 1000 + 999 : Date.now(),
      actor: actorOf(principal),
      ...(body.dryRun ? { dryRun: true } : {}),
    };
    const total = await countItems(db, { contractId: body.contractId, collectionId: body.collectionId, sinceMs: params.sinceMs, untilMs: params.untilMs });
    if (total <= APPLY_IN_REQUEST) return applyFilter(db, params, total, async () => {});
    const jobId = await createJob(db, { contractId: body.contractId, kind: APPLY_JOB, params, total, actor: params.actor });
    await runner.enqueue(jobId);
    return reply.code(202).header('location', `/collection/jobs/${jobId}`).send(presentJob((await findJob(db, body.contractId, jobId))!));
  });

  app.get('/collection/filters/operators', { schema: operatorsSchema }, async (request) => {
    await authenticate(db, request);
    return ruleTable();
  });
}

