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
import { hashtagOf, twitterPostsRead, youtubePollUnits, youtubeUnits } from '../lib/quota-windows.ts';
import { iso } from '../lib/time.ts';
import type { ServiceSettings } from '../services/table.ts';
import type { Db } from '../store/db.ts';
import { addUnits, ENVIRONMENT, type QuotaSettings, reserveHashtag, reserveUnits, unitQuota, unitsUsed } from '../store/quotas.ts';
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

  if (input.service === 'instagram') {
    if (input.type !== 'tag' || !services.instagram.accessToken || !services.instagram.userId) return undefined;
    const name = input.input.trim().replace(/^[#@]/, '');
    const state = JSON.parse(input.sourceState) as Record<string, unknown>;
    // The connector keeps the hashtag id: no lookup, nothing counted.
    if (state.tag === name && typeof state.hashtagId === 'string') return undefined;
    const hashtag = hashtagOf(input.input);
    const refused = await db.transaction().execute((trx) => reserveHashtag(trx, subject, hashtag, now));
    if (refused) {
      throw new QuotaWait(
        `waiting for quota instagram-hashtags: ${refused.used} of ${refused.limit} unique hashtags looked up in the last 7 days with ${whose(credential, 'INSTAGRAM_ACCESS_TOKEN')}, #${hashtag} not among them; resumes at ${iso(refused.oldest.freesAt)}, when #${refused.oldest.hashtag} frees up`,
        refused.oldest.freesAt,
      );
    }
    return undefined;
  }

  const metered = unitQuota(input.service, settings, now);
  if (!metered) return undefined;
  const key = { subject, quota: metered.quota, period: metered.period.key };
  let taken: number;
  let cost: (url: string, body: Uint8Array) => number;
  if (input.service === 'youtube') {
    const { apiUrl, apiKey } = services.youtube;
    if (!apiKey) return undefined; // the keyless feed costs no units
    taken = youtubePollUnits(input.type);
    cost = (url) => (url.startsWith(`${apiUrl}/`) ? youtubeUnits(url.slice(apiUrl.length)) : 0);
  } else {
    const { apiUrl } = services.twitter;
    taken = 1;
    cost = (url, body) => {
      if (!url.startsWith(`${apiUrl}/`)) return 0;
      try {
        return twitterPostsRead(new URL(url.slice(apiUrl.length), 'http://x').pathname, JSON.parse(Buffer.from(body).toString('utf8')));
      } catch {
        return 0;
      }
    };
  }
  if ((await reserveUnits(db, key, taken, metered.limit)) === undefined) {
    const used = await unitsUsed(db, key);
    const variable = input.service === 'youtube' ? 'YOUTUBE_API_KEY' : 'TWITTER_BEARER_TOKEN';
    const needs = input.service === 'youtube' ? `; a poll of this ${input.type} input takes up to ${taken}` : '';
    throw new QuotaWait(
      `waiting for quota ${metered.quota}: ${used} of ${metered.limit} ${metered.unit} ${metered.when} with ${whose(credential, variable)}${needs}; resumes at ${iso(metered.period.resetsAt)}`,
      metered.period.resetsAt,
    );
  }
  let spent = 0;
  return {
    async fetch(url, headers, request) {
      // A call that fails on the way (timeout, refused) may still have reached the service: counted.
      let charged = false;
      try {
        const response = await fetch(url, headers, request);
        spent += cost(url, response.body);
        charged = true;
        return response;
      } finally {
        if (!charged && input.service === 'youtube') spent += cost(url, new Uint8Array());
      }
    },
    settle: () => addUnits(db, key, spent - taken),
  };
}
