/**
 * `buildApp(config, deps)`: the HTTP application without listening (tests build it in-process
 * and use `inject`; `main.ts` listens). It registers, in order, error handling, health checks
 * and the route table of each area the process's roles serve (decisions §1).
 */
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { authRoutes } from './auth/routes.ts';
import type { Config } from './config.ts';
import { installErrorHandling } from './http/errors.ts';
import { compileFor } from './http/validate.ts';
import { inputRoutes } from './management/inputs/routes.ts';
import { queueRoutes } from './queue/routes.ts';
import type { Db } from './store/db.ts';
import { schemaState } from './store/migrate.ts';

export const ROLES = ['all', 'auth', 'api', 'queue', 'collector'] as const;
export type Role = (typeof ROLES)[number];

/** Request bodies at most 1 MiB (decisions §10). */
export const BODY_LIMIT = 1024 * 1024;

export interface AppDeps {
  db: Db;
  /** Which APIs this process serves; default all. `collector` serves only the health checks. */
  role?: Role;
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const role = deps.role ?? 'all';
  const app = Fastify({
    // Logs go to stderr: stdout carries the CLI's one JSON document (decisions §12).
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel, stream: process.stderr },
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomBytes(12).toString('hex'),
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.setValidatorCompiler(({ schema, httpPart }) => compileFor(httpPart, schema));
  installErrorHandling(app);
  await app.register(formbody);

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await sql`select 1`.execute(deps.db);
      const { state } = await schemaState(deps.db);
      if (state === 'current') return { status: 'ok' };
      return reply.code(503).send({ status: 'unavailable', reason: `schema ${state}` });
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
  });

  const ctx = { db: deps.db, config };
  if (role === 'all' || role === 'auth') authRoutes(app, ctx);
  if (role === 'all' || role === 'api') inputRoutes(app, ctx);
  if (role === 'all' || role === 'queue') queueRoutes(app, ctx);
  if (role === 'all' || role === 'queue') {
    // Loaded on demand: the sanitizer and templates would slow every CLI command that imports this file.
    const { publicationRoutes } = await import('./publication/routes.ts');
    publicationRoutes(app, ctx);
  }
  return app;
}
