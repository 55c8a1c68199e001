/**
 * WebSub subscriptions of inputs (docs/services.md#websub): the rows the subscriber
 * (`collect/websub/subscriber.ts`) creates, sends, renews and ends, and the callback
 * (`collect/websub/routes.ts`) looks up by id. Reads by id return the row whatever its
 * contract: the callback id is the capability, and a row names the one input it feeds.
 */
import type { Updateable } from 'kysely';
import type { Db } from './db.ts';
import { liveInputs } from './inputs.ts';
import type { InputRow, WebsubSubscriptionRow, WebsubSubscriptionTable } from './tables.ts';

/** The WebSub subscription with this id, or undefined. */
export async function findSubscription(db: Db, id: string): Promise<WebsubSubscriptionRow | undefined> {
  return db.selectFrom('websubSubscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every subscription (the subscriber compares them with the inputs that want one). */
export async function listSubscriptions(db: Db): Promise<WebsubSubscriptionRow[]> {
  return db.selectFrom('websubSubscriptions').selectAll().execute();
}

/** Stores a new WebSub subscription. */
export async function insertSubscription(db: Db, row: WebsubSubscriptionRow): Promise<void> {
  await db.insertInto('websubSubscriptions').values(row).execute();
}

/**
 * Changes subscription `id`; with `when`, only while its columns still have those values (a
 * verification and the subscriber's next step must not undo each other). Answers whether a
 * row changed.
 */
export async function updateSubscription(
  db: Db, id: string, changes: Updateable<WebsubSubscriptionTable>, when: Partial<Pick<WebsubSubscriptionRow, 'state' | 'pending'>> = {},
): Promise<boolean> {
  let query = db.updateTable('websubSubscriptions').set(changes).where('id', '=', id);
  if (when.state !== undefined) query = query.where('state', '=', when.state);
  if (when.pending !== undefined) query = when.pending === null ? query.where('pending', 'is', null) : query.where('pending', '=', when.pending);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes subscription `id`; answers whether it was there. */
export async function deleteSubscription(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('websubSubscriptions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Subscriptions whose `nextActionAt` (ms) is reached at `now`, soonest first, at most `limit`. */
export async function dueSubscriptions(db: Db, now: number, limit: number): Promise<WebsubSubscriptionRow[]> {
  return db.selectFrom('websubSubscriptions').selectAll().where('nextActionAt', '<=', now).orderBy('nextActionAt').limit(limit).execute();
}

/** Which inputs of `service` may be pushed: of these `types` (all when absent), whose source state contains `stateContains` (a hub found). */
export interface PushableFilter {
  service: string;
  types?: readonly string[];
  stateContains?: string;
}

/**
 * The inputs that may be fed by WebSub: active, in an active collection of an active contract,
 * and matching one of `filters` (the services with push on: feeds whose poll found a hub,
 * `"websub"` in their source state; YouTube `channel` inputs when WEBSUB_YOUTUBE is on).
 */
export async function pushableInputs(db: Db, filters: readonly PushableFilter[]): Promise<InputRow[]> {
  if (!filters.length) return [];
  return liveInputs(db)
    .where((eb) =>
      eb.or(
        filters.map(({ service, types, stateContains }) =>
          eb.and([
            eb('inputs.service', '=', service),
            ...(types ? [eb('inputs.type', 'in', [...types])] : []),
            ...(stateContains === undefined ? [] : [eb('inputs.sourceState', 'like', `%${stateContains}%`)]),
          ]),
        ),
      ),
    )
    .execute();
}
