/**
 * The webhook delivery worker (docs/api.md#webhook-delivery): every tick it claims due deliveries
 * from the outbox (`store/outbox.ts`), sends each as a Standard Webhooks request and records the
 * outcome. It runs in every process that collects (roles `all` and `collector`): on SQLite the one
 * process delivers; on PostgreSQL every collector process claims rows with `FOR UPDATE SKIP
 * LOCKED` and a lease, so any process delivers and none sends a delivery another holds. Each
 * webhook has at most WEBHOOK_CONCURRENCY deliveries under way, claimed webhook by webhook
 * (`claimDeliveries`): a receiver that does not answer holds only its own (issue 30 point 5).
 *
 * A request (Standard Webhooks, https://www.standardwebhooks.com/, signed with the `standardwebhooks`
 * package): `POST <url>` with the stored body `{type, timestamp, data}`, `content-type:
 * application/json`, `webhook-id` (the event's id, the same on every attempt and for every
 * webhook), `webhook-timestamp` (the attempt's Unix seconds) and `webhook-signature` (`v1,` and
 * the base64 HMAC-SHA256 of `id.timestamp.body` under the webhook's secret). It goes through the
 * collector's guarded fetch (`fetch.ts`): loopback and private addresses are refused unless
 * ALLOW_PRIVATE_FETCH, redirects are not followed, the whole request is bounded by
 * WEBHOOK_TIMEOUT_MS, and at most 1 024 characters of the response body are kept. Any 2xx is a
 * delivery; anything else, or no answer, is retried (`recordAttempt`).
 */
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config.ts';
import { observeWebhookDelivery } from '../lib/metrics.ts';
import { currentSecretKey, open } from '../lib/secret-box.ts';
import type { Db } from '../store/db.ts';
import { isPostgres } from '../store/db.ts';
import { type Claimed, claimDeliveries, type Outcome, pruneDeliveries, recordAttempts, releaseClaims } from '../store/outbox.ts';
import { createFetcher, FetchError } from './fetch.ts';
import { startTicker } from './ticker.ts';

/**
 * Deliveries under way at once per process, all webhooks together: a bound on sockets and
 * buffered responses (1 MiB each at most), far above one webhook's share (WEBHOOK_CONCURRENCY),
 * so one receiver that does not answer cannot fill it; when many do, claims serve the webhooks
 * round-robin.
 */
export const DELIVERIES_IN_FLIGHT = 128;
/** While deliveries are under way, how often to look for newly due ones, ms. */
const LOOK_MS = 200;
/** Free slots a claim waits for while deliveries are under way. */
const CLAIM_AT_LEAST = 8;
/** Outcomes finishing within this many ms of each other are recorded in one transaction. */
const RECORD_MS = 5;
/** Characters of a response body kept with its attempt. */
export const RESPONSE_EXCERPT = 1024;
/** Ended deliveries are kept this long (ms) for reading and resending: 7 days. */
export const KEEP_DELIVERIES_MS = 7 * 24 * 3600 * 1000;

export interface DeliveryWorker {
  /** Delivers what is due now, or joins the round under way. */
  tick(): Promise<void>;
  /** Stops; resolves when the deliveries under way have been recorded. */
  stop(): Promise<void>;
}

/** The headers and body of a delivery of `claimed` at `at` (ms), signed with `secret` (`whsec_…`). */
export function signedRequest(claimed: Pick<Claimed, 'eventId' | 'payload'>, secret: string, at: number): Record<string, string> {
  const timestamp = new Date(Math.floor(at / 1000) * 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': claimed.eventId,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': new Webhook(secret).sign(claimed.eventId, timestamp, claimed.payload),
  };
}

/** Starts delivering; `tickMs` is the time between two looks at the outbox (default 1000). */
export function startDelivery(deps: { db: Db; config: Config; log?: FastifyBaseLogger }, tickMs = 1000): DeliveryWorker {
  const { db, config, log } = deps;
  const timeoutMs = config.webhookTimeoutMs;
  // The lease outlasts the request's time limit and the recording of its outcome.
  const leaseMs = timeoutMs * 2 + 10_000;
  const policy = { baseMs: config.webhookRetryMs, windowMs: config.webhookRetryWindow * 1000 };
  const fetcher = createFetcher({ allowPrivate: config.allowPrivateFetch, timeoutMs, maxBytes: 1024 * 1024, maxRedirects: 0 });
  const secrets = new Map<string, { modified: string; secret: string }>();
  let released = isPostgres(db);
  let pruned = 0;
  /** The webhook the last claim served last: the next claim starts after it (round-robin). */
  let after: string | undefined;
  let stopping = false;

  function secretOf(claimed: Claimed): string {
    const cached = secrets.get(claimed.webhookId);
    if (cached?.modified === claimed.webhookModified) return cached.secret;
    const secret = open(currentSecretKey(config), claimed.secret);
    secrets.set(claimed.webhookId, { modified: claimed.webhookModified, secret });
    if (secrets.size > 1000) secrets.delete(secrets.keys().next().value!);
    return secret;
  }

  async function send(claimed: Claimed): Promise<Outcome> {
    const at = Date.now();
    try {
      const response = await fetcher(claimed.url, signedRequest(claimed, secretOf(claimed), at), { method: 'POST', body: claimed.payload });
      observeWebhookDelivery(response.status >= 200 && response.status < 300 ? 'success' : 'http_error', Date.now() - at);
      const text = Buffer.from(response.body).toString('utf8', 0, Math.min(response.body.byteLength, RESPONSE_EXCERPT * 4)).slice(0, RESPONSE_EXCERPT);
      return { at, durationMs: Date.now() - at, statusCode: response.status, error: null, response: text || null };
    } catch (error) {
      observeWebhookDelivery('no_response', Date.now() - at);
      const message = error instanceof FetchError ? error.message : 'internal error while delivering (see the server log)';
      if (!(error instanceof FetchError)) log?.error({ err: error, webhook: claimed.webhookId }, 'webhook delivery failed');
      return { at, durationMs: Date.now() - at, statusCode: null, error: message, response: null };
    }
  }

  const inFlight = new Set<Promise<void>>();
  /** The outcomes waiting to be recorded together, and the promise of their recording. */
  let batch: { attempts: { claimed: Claimed; outcome: Outcome }[]; recorded: Promise<void> } | undefined;
  /** Recordings run one after the other. */
  let recording: Promise<unknown> = Promise.resolve();

  /** Records an outcome with those that finish within RECORD_MS of it, in one transaction. */
  function record(claimed: Claimed, outcome: Outcome): Promise<void> {
    if (!batch) {
      const attempts: { claimed: Claimed; outcome: Outcome }[] = [];
      const recorded = new Promise<void>((resolve, reject) => {
        setTimeout(() => {
          batch = undefined;
          const run = recording.then(async () => {
            const decided = await recordAttempts(db, attempts, policy);
            decided.forEach((one, i) => {
              if (one === 'failed') log?.warn({ webhook: attempts[i]!.claimed.webhookId, event: attempts[i]!.claimed.eventId }, 'webhook disabled: its deliveries failed for the whole retry window');
            });
          });
          recording = run.catch(() => {});
          run.then(resolve, reject);
        }, RECORD_MS);
      });
      batch = { attempts, recorded };
    }
    batch.attempts.push({ claimed, outcome });
    return batch.recorded;
  }

  /** Sends one claimed delivery; settles once its outcome is recorded. */
  function start(claimed: Claimed): void {
    const work: Promise<void> = send(claimed)
      .then((outcome) => record(claimed, outcome))
      .catch((err: unknown) => log?.error({ err, webhook: claimed.webhookId }, 'webhook delivery not recorded'))
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  }

  /**
   * Keeps deliveries under way, claiming more as they finish or every LOOK_MS while some are under
   * way (at least CLAIM_AT_LEAST at a time when the process is near DELIVERIES_IN_FLIGHT): each
   * webhook has at most WEBHOOK_CONCURRENCY under way and the webhooks are served in turn
   * (`claimDeliveries`), so a receiver that does not answer holds its own slots, not the others'
   * (docs/api.md#webhook-delivery); ends when nothing is under way or due.
   */
  async function round(): Promise<void> {
    if (!released) {
      // SQLite: this is the one process that delivers, so a claim left by a killed process is void.
      await releaseClaims(db);
      released = true;
    }
    while (!stopping) {
      const free = DELIVERIES_IN_FLIGHT - inFlight.size;
      // Claims take several slots at once (one query for many), unless nothing is under way.
      if (free >= CLAIM_AT_LEAST || inFlight.size === 0) {
        const claimed = await claimDeliveries(db, Date.now(), { limit: free, perWebhook: config.webhookConcurrency, ...(after === undefined ? {} : { after }) }, leaseMs);
        if (claimed.length) after = claimed.at(-1)!.webhookId;
        for (const one of claimed) start(one);
        if (inFlight.size === 0) break;
        if (claimed.length === free) continue;
      }
      await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, LOOK_MS).unref())]);
    }
    await Promise.all(inFlight);
    if (Date.now() - pruned > 3600_000) {
      pruned = Date.now();
      await pruneDeliveries(db, Date.now() - KEEP_DELIVERIES_MS);
    }
  }

  const ticker = startTicker(round, tickMs, log);
  let stopped: Promise<void> | undefined;
  return {
    tick: ticker.tick,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        await ticker.stop();
        await fetcher.close();
      })();
      return stopped;
    },
  };
}
