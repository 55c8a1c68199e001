/**
 * Schema migrations (kysely Migrator with a fixed list). `schemaState` tells how the database
 * stands against the code, so `serve` can migrate an empty database itself and refuse one that
 * is older (run `sluice migrate`) or newer than the code.
 */
import { type Kysely, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import { currentSchema, withStartupLock } from './db.ts';
import * as management from './migrations/2026-11-22-management.ts';
import * as initial from './migrations/2026-11-22-initial.ts';
import * as loginSessions from './migrations/2026-11-22-login-sessions.ts';
import * as queueReads from './migrations/2026-11-22-queue-reads.ts';
import * as rejections from './migrations/2026-11-22-rejections.ts';
import * as itemsJsonb from './migrations/2026-11-23-items-jsonb.ts';
import * as consoleClient from './migrations/2026-11-24-console-client.ts';
import * as pollWarnings from './migrations/2026-11-25-poll-warnings.ts';
import * as moderationArrivals from './migrations/2026-11-25-moderation-arrivals.ts';
import * as customizationVersions from './migrations/2026-11-25-customization-versions.ts';
import * as clientEmails from './migrations/2026-11-26-client-emails.ts';
import * as rateLimits from './migrations/2026-11-26-rate-limits.ts';
import * as credentials from './migrations/2026-11-27-credentials.ts';
import * as dedupe from './migrations/2026-11-27-dedupe.ts';
import * as auditJobs from './migrations/2026-11-28-audit-jobs.ts';
import * as connectFlows from './migrations/2026-11-28-connect-flows.ts';
import * as dedupePrints from './migrations/2026-11-28-dedupe-prints.ts';
import * as quotasUsage from './migrations/2026-11-28-quotas-usage.ts';
import * as webhooksOutbox from './migrations/2026-11-28-webhooks-outbox.ts';
import * as feeds from './migrations/2026-11-29-feeds.ts';
import * as inputInterval from './migrations/2026-11-29-input-interval.ts';
import * as readIndexes from './migrations/2026-11-29-read-indexes.ts';
import * as retention from './migrations/2026-11-29-retention.ts';
import * as trending from './migrations/2026-11-29-trending.ts';
import * as websub from './migrations/2026-11-29-websub.ts';
import * as printSpaces from './migrations/2026-11-30-print-spaces.ts';
import * as unindexedKeys from './migrations/2026-11-30-unindexed-keys.ts';
import * as readSeq from './migrations/2026-12-01-read-seq.ts';
import * as webhookFairClaims from './migrations/2026-12-02-webhook-fair-claims.ts';
import * as publicationSettings from './migrations/2026-12-03-publication-settings.ts';
import * as rolesScopes from './migrations/2026-12-04-roles-scopes.ts';
import * as inputSlots from './migrations/2026-12-05-input-slots.ts';
import * as team from './migrations/2026-12-05-team.ts';
import * as displayState from './migrations/2026-12-06-display-state.ts';
import * as itemSearch from './migrations/2026-12-06-item-search.ts';
import * as pinsEdits from './migrations/2026-12-07-pins-edits.ts';
import * as passwordResets from './migrations/2026-12-08-password-resets.ts';
import * as twoFactor from './migrations/2026-12-09-two-factor.ts';
import * as oidcSignIns from './migrations/2026-12-10-oidc-sign-ins.ts';
import * as inputTitle from './migrations/2026-12-11-input-title.ts';
import * as filterOverride from './migrations/2026-12-15-filter-override.ts';
import * as analytics from './migrations/2026-12-17-analytics.ts';
import * as customizationCollection from './migrations/2026-12-19-customization-collection.ts';
import * as articles from './migrations/2026-12-20-articles.ts';
import * as blockedAuthors from './migrations/2026-12-21-blocked-authors.ts';
import * as hold from './migrations/2026-12-22-hold.ts';
import * as itemSearchScoped from './migrations/2026-12-23-item-search-scoped.ts';
import * as imageScreening from './migrations/2026-12-24-image-screening.ts';
import * as removedState from './migrations/2026-12-25-removed-state.ts';
import * as reverify from './migrations/2026-12-26-reverify.ts';
import * as erasedItems from './migrations/2026-12-27-erased-items.ts';
import * as erasedReason from './migrations/2026-12-28-erased-reason.ts';

// Kysely applies migrations in name order: a new topic's name must sort after the last one.
const migrations: Record<string, Migration> = {
  '2026-11-22-initial': initial,
  '2026-11-22-login-sessions': loginSessions,
  '2026-11-22-management': management,
  '2026-11-22-queue-reads': queueReads,
  '2026-11-22-rejections': rejections,
  '2026-11-23-items-jsonb': itemsJsonb,
  '2026-11-24-console-client': consoleClient,
  '2026-11-25-poll-warnings': pollWarnings,
  '2026-11-25-moderation-arrivals': moderationArrivals,
  '2026-11-25-customization-versions': customizationVersions,
  '2026-11-26-client-emails': clientEmails,
  '2026-11-26-rate-limits': rateLimits,
  '2026-11-27-credentials': credentials,
  '2026-11-27-dedupe': dedupe,
  '2026-11-28-audit-jobs': auditJobs,
  '2026-11-28-connect-flows': connectFlows,
  '2026-11-28-dedupe-prints': dedupePrints,
  '2026-11-28-quotas-usage': quotasUsage,
  '2026-11-28-webhooks-outbox': webhooksOutbox,
  '2026-11-29-feeds': feeds,
  '2026-11-29-input-interval': inputInterval,
  '2026-11-29-read-indexes': readIndexes,
  '2026-11-29-retention': retention,
  '2026-11-29-trending': trending,
  '2026-11-29-websub': websub,
  '2026-11-30-print-spaces': printSpaces,
  '2026-11-30-unindexed-keys': unindexedKeys,
  '2026-12-01-read-seq': readSeq,
  '2026-12-02-webhook-fair-claims': webhookFairClaims,
  '2026-12-03-publication-settings': publicationSettings,
  '2026-12-04-roles-scopes': rolesScopes,
  '2026-12-05-input-slots': inputSlots,
  '2026-12-05-team': team,
  '2026-12-06-display-state': displayState,
  '2026-12-06-item-search': itemSearch,
  '2026-12-07-pins-edits': pinsEdits,
  '2026-12-08-password-resets': passwordResets,
  '2026-12-09-two-factor': twoFactor,
  '2026-12-10-oidc-sign-ins': oidcSignIns,
  '2026-12-11-input-title': inputTitle,
  '2026-12-15-filter-override': filterOverride,
  '2026-12-17-analytics': analytics,
  '2026-12-19-customization-collection': customizationCollection,
  '2026-12-20-articles': articles,
  '2026-12-21-blocked-authors': blockedAuthors,
  '2026-12-22-hold': hold,
  '2026-12-23-item-search-scoped': itemSearchScoped,
  '2026-12-24-image-screening': imageScreening,
  '2026-12-25-removed-state': removedState,
  '2026-12-26-reverify': reverify,
  '2026-12-27-erased-items': erasedItems,
  '2026-12-28-erased-reason': erasedReason,
};

/** The names of every migration this version knows, in the order they apply. */
export const MIGRATIONS = Object.keys(migrations).sort();

const TABLE = 'schema_migrations';

/**
 * The Migrator; on PostgreSQL its bookkeeping tables live in the connection's current schema
 * (without naming it, Kysely would take a `schema_migrations` of any schema for ours).
 */
async function migrator<DB>(db: Kysely<DB>): Promise<Migrator> {
  const schema = await currentSchema(db);
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: TABLE,
    migrationLockTableName: `${TABLE}_lock`,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

export type SchemaState = 'empty' | 'current' | 'behind' | 'ahead';

/** How the database's applied migrations compare with the code's. */
export async function schemaState<DB>(db: Kysely<DB>): Promise<{ state: SchemaState; applied: string[]; known: string[] }> {
  const known = Object.keys(migrations).sort();
  const list = await (await migrator(db)).getMigrations();
  const schema = await currentSchema(db);
  const tables = await db.introspection.getTables();
  const applied = tables.some((table) => table.name === TABLE && (!schema || table.schema === schema))
    ? (await sql<{ name: string }>`select name from ${sql.table(TABLE)}`.execute(db)).rows.map((row) => row.name).sort()
    : [];
  if (applied.some((name) => !known.includes(name))) return { state: 'ahead', applied, known };
  if (applied.length === 0) return { state: 'empty', applied, known };
  return { state: list.every((m) => m.executedAt) ? 'current' : 'behind', applied, known };
}

/** Applies every pending migration, each in its own transaction; returns their names. */
export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<string[]> {
  const { state, applied } = await schemaState(db);
  if (state === 'ahead') throw new Error(`The database has migrations this version does not know (${applied.join(', ')}); upgrade Sluice.`);
  const { error, results } = await (await migrator(db)).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Brings the database to the code's schema for `serve`: migrates an empty database, accepts a
 * current one, and throws for an older (run `sluice migrate`) or newer one.
 */
export async function ensureSchema<DB>(db: Kysely<DB>): Promise<void> {
  const { state } = await schemaState(db);
  if (state === 'empty') await migrateToLatest(db);
  else if (state === 'behind') throw new Error('The database schema is older than this version: run `sluice migrate` first.');
  else if (state === 'ahead') throw new Error('The database schema is newer than this version of Sluice; refusing to start.');
}

/**
 * `ensureSchema` for processes that may start at the same moment against one PostgreSQL: they
 * take turns (an advisory lock per schema), so one migrates and `then` runs (e.g. the first-start
 * bootstrap, given whether the database was empty) while the others wait and find it done.
 */
export async function ensureSchemaOnce<DB, T>(db: Kysely<DB>, then: (wasEmpty: boolean) => Promise<T>): Promise<T> {
  const key = `sluice-startup:${(await currentSchema(db)) ?? ''}`;
  return withStartupLock(db, key, async () => {
    const { state } = await schemaState(db);
    await ensureSchema(db);
    return then(state === 'empty');
  });
}
