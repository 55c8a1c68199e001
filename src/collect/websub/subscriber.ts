/**
 * The WebSub subscriber (W3C WebSub §5.1; docs/services.md#websub), run by the collector
 * processes (`server.ts`). Every `WEBSUB_CHECK_INTERVAL` seconds, in one process of the
 * installation at a time (the `websub` lease of `store/streams.ts`):
 *
 * 1. Compares the inputs that can be pushed (`pushableInputs`: an `rss` input whose last poll
 *    found a hub, `websub` in its state; a YouTube `channel` input, at `WEBSUB_YOUTUBE_HUB` with
 *    YouTube's topic) with the subscriptions: a new subscription (random id and secret, the
 *    secret sealed like credentials) for an input without one; an `unsubscribing` one for a
 *    subscription whose input is gone, inactive (or its collection or contract), or now names
 *    another hub or topic (its input back to `poll`). With `WEBSUB=false` no input wants one.
 * 2. Acts on the subscriptions due (`nextActionAt`), at most `BATCH` per look, `PARALLEL` at
 *    once: POSTs `hub.mode=subscribe` (new, renewal at 80 % of the lease, or again when a hub
 *    never verified within `VERIFY_WAIT_MS`) with `hub.callback` `{API_URL}/websub/<id>`,
 *    `hub.topic`, `hub.secret`, `hub.lease_seconds`; or `hub.mode=unsubscribe`. The request's
 *    mode is recorded (`pending`) before it is sent, as a hub may verify before it answers. A
 *    failed request is retried with exponential backoff (1 min doubling to 6 h; an unsubscribe
 *    is given up after `MAX_UNSUBSCRIBE_ATTEMPTS`, its lease runs out at the hub). A lease that
 *    ran out unrenewed puts the input back to `poll` and subscribes again.
 *
 * Requests go through the collector's guarded fetcher (`createFetcher`): a hub on a private
 * address is refused unless `ALLOW_PRIVATE_FETCH` (the subscription records the error).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import { currentSecretKey, open, seal } from '../../lib/secret-box.ts';
import type { Db } from '../../store/db.ts';
import { setFeedMode } from '../../store/inputs.ts';
import { holdStream, releaseStream } from '../../store/streams.ts';
import type { InputRow, WebsubSubscriptionRow } from '../../store/tables.ts';
import { deleteSubscription, dueSubscriptions, insertSubscription, listSubscriptions, type PushableFilter, pushableInputs, updateSubscription } from '../../store/websub.ts';
import type { SourceFetch } from '../../services/connector.ts';
import { createFetcher } from '../fetch.ts';
import { startTicker } from '../ticker.ts';
import { serviceModule, SERVICE_MODULES } from '../../services/index.ts';
import type { WebsubTarget } from '../../services/kit/websub-hub.ts';

/** The name of the subscriber's lease among the streams (one process acts at a time). */
export const WEBSUB_LEASE = 'websub';
/** Subscriptions acted on per look, and at once. */
const BATCH = 100;
const PARALLEL = 8;
/** A hub that accepted a request but never verified it is asked again after this long (ms). */
export const VERIFY_WAIT_MS = 10 * 60 * 1000;
const MAX_BACKOFF_MS = 6 * 3600 * 1000;
const MAX_UNSUBSCRIBE_ATTEMPTS = 5;

export interface WebsubSubscriber {
  /** Looks now (or joins the look under way); resolves when it is done. */
  tick(): Promise<void>;
  /** Stops looking, waits for the look under way, gives the lease up, closes connections. */
  stop(): Promise<void>;
}

/**
 * Starts the subscriber of this process; `fetch` defaults to a guarded fetcher of
 * `ALLOW_PRIVATE_FETCH`, `holder` to a random id of this process.
 */
export function startWebsub(deps: { db: Db; config: Config; log?: FastifyBaseLogger; fetch?: SourceFetch; holder?: string }, tickMs = deps.config.websub.checkInterval * 1000): WebsubSubscriber {
  const { db, config, log } = deps;
  const own = deps.fetch ? undefined : createFetcher({ allowPrivate: config.allowPrivateFetch });
  const fetch = deps.fetch ?? own!;
  const holder = deps.holder ?? randomBytes(12).toString('hex');
  // Held for three looks: another process takes over within that long when this one dies.
  const ttlMs = Math.max(3 * tickMs, 5000);
  let stopping = false;

  async function look(): Promise<void> {
    if (stopping) return;
    if (!(await holdStream(db, WEBSUB_LEASE, holder, ttlMs)).held) return;
    await reconcile(db, config, Date.now());
    const due = await dueSubscriptions(db, Date.now(), BATCH);
    for (let i = 0; i < due.length && !stopping; i += PARALLEL) {
      await Promise.all(due.slice(i, i + PARALLEL).map((sub) => act(db, config, fetch, sub, log).catch((err: unknown) => log?.error({ err, subscription: sub.id }, 'WebSub request failed'))));
    }
  }

  const ticker = startTicker(look, tickMs, log);
  return {
    tick: ticker.tick,
    async stop() {
      stopping = true;
      await ticker.stop();
      await releaseStream(db, WEBSUB_LEASE, holder).catch(() => {});
      await own?.close();
    },
  };
}

/** What the store selects of the inputs that may be pushed: per service with push on, its filter (`push.inputs` of its module). */
function pushFilters(config: Config): PushableFilter[] {
  return SERVICE_MODULES.flatMap((module) => (module.push?.enabled(config.websub) ? [{ service: module.name, ...module.push.inputs }] : []));
}

/** The hub and topic `input` should be subscribed to, or undefined (see the module; its service's `push.targetOf`). */
export function targetOf(input: InputRow, config: Config): WebsubTarget | undefined {
  let state: Record<string, unknown>;
  try {
    state = JSON.parse(input.sourceState) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  return serviceModule(input.service)?.push?.targetOf(input, state, config.websub);
}

/** Step 1 of the module: subscriptions made and ended to match the inputs at `now` (ms). */
async function reconcile(db: Db, config: Config, now: number): Promise<void> {
  const wanted = new Map<string, { input: InputRow; target: WebsubTarget }>();
  if (config.websub.enabled) {
    for (const input of await pushableInputs(db, pushFilters(config))) {
      const target = targetOf(input, config);
      if (target) wanted.set(input.id, { input, target });
    }
  }
  for (const sub of await listSubscriptions(db)) {
    if (sub.state === 'unsubscribing') continue;
    const want = wanted.get(sub.inputId);
    if (want && want.target.hub === sub.hub && want.target.topic === sub.topic) {
      wanted.delete(sub.inputId);
      continue;
    }
    // Never sent: nothing to undo at the hub.
    if (sub.state === 'subscribing' && sub.pending === null && sub.expiresAt === null) await deleteSubscription(db, sub.id);
    else await updateSubscription(db, sub.id, { state: 'unsubscribing', pending: null, nextActionAt: now, attempts: 0, lastError: null }, { state: sub.state });
    await setFeedMode(db, [sub.inputId], 'poll', now);
  }
  if (!wanted.size) return;
  const key = currentSecretKey(config);
  for (const { input, target } of wanted.values()) {
    await insertSubscription(db, {
      id: randomBytes(16).toString('hex'),
      inputId: input.id,
      contractId: input.contractId,
      service: input.service,
      hub: target.hub,
      topic: target.topic,
      secret: seal(key, randomBytes(32).toString('base64url')),
      keyId: key.id,
      state: 'subscribing',
      pending: null,
      expiresAt: null,
      nextActionAt: now,
      attempts: 0,
      lastError: null,
      createdAt: now,
    });
  }
}

/** Step 2 of the module for one due subscription. */
async function act(db: Db, config: Config, fetch: SourceFetch, sub: WebsubSubscriptionRow, log?: FastifyBaseLogger): Promise<void> {
  const now = Date.now();
  if (sub.state === 'unsubscribing') {
    // Sent and not verified in time, or the hub keeps failing: the lease ends at the hub anyway.
    if (sub.pending === 'unsubscribe' || sub.attempts >= MAX_UNSUBSCRIBE_ATTEMPTS) {
      await deleteSubscription(db, sub.id);
      return;
    }
    await request(db, config, fetch, sub, 'unsubscribe', log);
    return;
  }
  if (sub.state === 'active' && sub.expiresAt !== null && sub.expiresAt <= now) {
    // The lease ran out unrenewed: polled again until a new subscription is verified.
    await updateSubscription(db, sub.id, { state: 'subscribing', expiresAt: null }, { state: 'active' });
    await setFeedMode(db, [sub.inputId], 'poll', now);
  }
  await request(db, config, fetch, sub, 'subscribe', log);
}

/** Sends `mode` for `sub` to its hub and records the outcome (see the module). */
async function request(db: Db, config: Config, fetch: SourceFetch, sub: WebsubSubscriptionRow, mode: 'subscribe' | 'unsubscribe', log?: FastifyBaseLogger): Promise<void> {
  const form = new URLSearchParams({
    'hub.callback': `${config.apiUrl}/websub/${sub.id}`,
    'hub.mode': mode,
    'hub.topic': sub.topic,
  });
  if (mode === 'subscribe') {
    form.set('hub.lease_seconds', String(config.websub.leaseSeconds));
    form.set('hub.secret', open(currentSecretKey(config), sub.secret));
  }
  // Recorded first: the hub may call back before it answers.
  await updateSubscription(db, sub.id, { pending: mode, nextActionAt: Date.now() + VERIFY_WAIT_MS });
  let error: string | undefined;
  try {
    const res = await fetch(sub.hub, { 'content-type': 'application/x-www-form-urlencoded', accept: '*/*' }, { method: 'POST', body: form.toString() });
    if (res.status < 200 || res.status > 299) error = `the hub answered HTTP ${res.status}${res.body.length ? `: ${Buffer.from(res.body.subarray(0, 200)).toString('utf8')}` : ''}`;
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  if (error === undefined) {
    await updateSubscription(db, sub.id, { attempts: 0, lastError: null }, { pending: mode });
    return;
  }
  const attempts = sub.attempts + 1;
  log?.warn({ subscription: sub.id, input: sub.inputId, hub: new URL(sub.hub).host, error }, `WebSub ${mode} failed`);
  await updateSubscription(db, sub.id, { pending: null, attempts, lastError: error, nextActionAt: Date.now() + Math.min(60_000 * 2 ** (attempts - 1), MAX_BACKOFF_MS) }, { pending: mode });
}
