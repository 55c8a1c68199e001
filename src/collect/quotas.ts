/**
 * The quota gate around one poll (docs/api.md#quotas): before the connector runs, the poll takes
 * from its credential's quota what it may spend; if that would exceed the quota the poll does not
 * run, and the input waits, its status naming the quota and when it resets. During the poll the
 * connector's real calls are metered (its fetch is wrapped), and afterwards the quota is set to
 * what they cost.
 *
 * - YouTube (with an API key): takes the most units a poll of the input's type spends
 *   (`youtubePollUnits`), then counts each call to YOUTUBE_API_URL by its method (search 100,
 *   the others 1), including failed calls (Google counts them too).
 * - X (when TWITTER_MONTHLY_READ_CAP is set): runs while at least one post of the month's cap is
 *   left, then counts the posts its responses held. X says how many posts a call returns only
 *   once they are read, so the poll that reaches the cap may pass it by what it read (at most 5
 *   pages of 100, `connectors/twitter.ts`).
 * - Instagram `tag` inputs whose hashtag id is not known yet (the connector will call
 *   ig_hashtag_search): the hashtag is counted first; when 30 others count already, the input waits
 *   until the oldest frees up.
 *
 * The quota is the credential's the poll uses (`credentials.ts`), or the installation's own
 * (`ENVIRONMENT`); an input without any credential is not gated (it fails saying what to connect).
 */
import { iso } from '../lib/time.ts';
import { serviceModule } from '../services/index.ts';
import type { ServiceSettings } from '../services/table.ts';
import type { Db } from '../store/db.ts';
import { type QuotaSettings, unitQuota } from '../services/module.ts';
import { addUnits, ENVIRONMENT, reserveHashtag, reserveUnits, unitsUsed } from '../store/quotas.ts';
import type { CredentialRow, InputRow } from '../store/tables.ts';
import type { SourceFetch } from '../services/connector.ts';

/** A poll that does not run for want of quota: `message` for the input's status, `until` (ms) when it may run. */
export class QuotaWait extends Error {
  readonly until: number;
  constructor(message: string, until: number) {
    super(message);
    this.name = 'QuotaWait';
    this.until = until;
  }
}

/** What a gated poll uses instead of the collector's fetch, and settles afterwards (success or not). */
export interface QuotaGate {
  fetch: SourceFetch;
  settle(): Promise<void>;
}

/** Who the quota belongs to, in the input's status. */
function whose(credential: CredentialRow | undefined, variable: string): string {
  return credential ? `credential ${credential.name} (${credential.id})` : `the installation's ${variable}`;
}

/**
 * Opens the gate of a poll of `input` at `now` with `services` (the resolved settings) and the
 * credential they came from (none: the environment's). Returns undefined when no quota applies.
 * @throws QuotaWait when the poll would exceed its quota.
 */
export async function openQuotaGate(
  db: Db,
  settings: QuotaSettings,
  poll: { input: InputRow; services: ServiceSettings; credential: CredentialRow | undefined; fetch: SourceFetch; now: number },
): Promise<QuotaGate | undefined> {
  const { input, services, credential, fetch, now } = poll;
  const subject = credential?.id ?? ENVIRONMENT;

  const rule = serviceModule(input.service)?.quota;
  if (!rule) return undefined;

  if (rule.kind === 'hashtags') {
    const hashtag = rule.pollHashtag(input, services);
    if (hashtag === undefined) return undefined;
    const refused = await db.transaction().execute((trx) => reserveHashtag(trx, rule.name, subject, hashtag, now));
    if (refused) {
      throw new QuotaWait(
        `waiting for quota ${rule.name}: ${refused.used} of ${refused.limit} unique hashtags looked up in the last 7 days with ${whose(credential, rule.variable)}, #${hashtag} not among them; resumes at ${iso(refused.oldest.freesAt)}, when #${refused.oldest.hashtag} frees up`,
        refused.oldest.freesAt,
      );
    }
    return undefined;
  }

  const metered = unitQuota(rule, settings, now);
  if (!metered) return undefined;
  const key = { subject, quota: metered.quota, period: metered.period.key };
  const taken = rule.take(input, services);
  if (taken === undefined) return undefined;
  const cost = (url: string, body: Uint8Array) => rule.cost(url, body, services);
  if ((await reserveUnits(db, key, taken, metered.limit)) === undefined) {
    const used = await unitsUsed(db, key);
    throw new QuotaWait(
      `waiting for quota ${metered.quota}: ${used} of ${metered.limit} ${metered.unit} ${metered.when} with ${whose(credential, rule.variable)}${rule.needs(input, taken)}; resumes at ${iso(metered.period.resetsAt)}`,
      metered.period.resetsAt,
    );
  }
  let spent = 0;
  return {
    async fetch(url, headers, request) {
      // A call that fails on the way (timeout, refused) may still have reached the service: counted where the service counts it.
      let charged = false;
      try {
        const response = await fetch(url, headers, request);
        spent += cost(url, response.body);
        charged = true;
        return response;
      } finally {
        if (!charged && rule.chargesFailedCalls) spent += cost(url, new Uint8Array());
      }
    },
    settle: () => addUnits(db, key, spent - taken),
  };
}
