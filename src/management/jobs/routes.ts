/**
 * Background jobs on {api_url} (docs/api.md#jobs):
 *
 *   GET /collection/jobs/{id}   the job: state, progress (`done` of `total`), its result or errors
 *
 * Contract-isolated: a job of a contract not granted to the token's consumer → 403 without its
 * data; an unknown id → 404; a malformed one → 400.
 */
import type { Config } from '../../config.ts';
import { notFoundError } from '../../errors.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { iso } from '../../lib/time.ts';
import type { Db } from '../../store/db.ts';
import { findJob } from '../../store/jobs.ts';
import { ownerOf } from '../../store/records.ts';
import type { JobRow } from '../../store/tables.ts';
import { IdParams, TokenQuery } from '../schemas.ts';
import { type ApplyResult, Job } from '../filters/schema.ts';

/** A job as the API answers it. */
export function presentJob(row: JobRow) {
  return {
    _id: row.id,
    contractId: row.contractId,
    kind: row.kind,
    state: row.state,
    done: Number(row.done),
    total: Number(row.total),
    created: iso(Number(row.createdAt)),
    createdBy: { id: row.consumerId, name: row.consumerName },
    ...(row.finishedAt !== null ? { finished: iso(Number(row.finishedAt)) } : {}),
    ...(row.result !== null ? { result: JSON.parse(row.result) as ApplyResult } : {}),
    ...(row.error !== null ? { errors: JSON.parse(row.error) as unknown[] } : {}),
  };
}

const schema = {
  tags: ['jobs'],
  summary: 'A background job: its state, progress and result',
  security: TOKEN_SECURITY,
  params: IdParams,
  querystring: TokenQuery,
  response: { 200: Job, ...errorResponses(400, 401, 403, 404) },
};

/** Registers the module's routes on `app` (see the module's description). */
export function jobRoutes(app: App, { db }: { db: Db; config: Config }): void {
  app.get('/collection/jobs/:id', { schema }, async (request) => {
    const principal = await authenticate(db, request);
    const { id } = request.params;
    const contractId = await ownerOf(db, 'jobs', id);
    if (contractId === undefined) throw notFoundError(`No job ${id}.`, 'id', id);
    await requireContractAccess(db, principal, contractId, 'id', 'the job named by id');
    const job = await findJob(db, contractId, id);
    if (!job) throw notFoundError(`No job ${id}.`, 'id', id);
    return presentJob(job);
  });
}
