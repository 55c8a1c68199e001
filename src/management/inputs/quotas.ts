/**
 * The quota check of an input's creation or change (docs/api.md#quotas): an Instagram `tag` input
 * counts its hashtag against its credential's 30 unique hashtags in 7 days (Meta's limit per
 * Instagram account) at once, in the transaction that stores the input, so that a batch, or two
 * requests at the same moment, cannot take the 31st. A hashtag that already counts is free. The
 * other quotas (YouTube units, X posts) are spent by polls: their inputs are accepted and wait
 * when the quota is spent (`collect/quotas.ts`).
 */
import type { Transaction } from 'kysely';
import type { Config } from '../../config.ts';
import { validationError, VALIDATION_CODES } from '../../errors.ts';
import { hashtagOf } from '../../lib/quota-windows.ts';
import { iso } from '../../lib/time.ts';
import { findCredential } from '../../store/credentials.ts';
import { ENVIRONMENT, instagramSubject, reserveHashtag } from '../../store/quotas.ts';
import type { Database } from '../../store/tables.ts';

/** What the check reads of an input. */
export interface QuotaInput {
  contractId: string;
  service: string;
  type: string;
  input: string;
  credentialId?: string | null;
}

/**
 * Counts the hashtag of each Instagram `tag` input in `inputs` against its credential at `now`,
 * inside `trx`. @throws ApiError 400 ValidationError (code 1003) naming `propertyName` (the
 * input's `input`) when one would be a 31st hashtag in 7 days; the caller's transaction then
 * rolls back whatever the others counted.
 */
export async function countHashtags(trx: Transaction<Database>, config: Config, inputs: { input: QuotaInput; propertyName: string }[], now: number): Promise<void> {
  const shared = config.sharedCredentials && Boolean(config.services.instagram.accessToken);
  for (const { input, propertyName } of inputs) {
    if (input.service !== 'instagram' || input.type !== 'tag') continue;
    const subject = await instagramSubject(trx, input, shared);
    if (!subject) continue;
    const hashtag = hashtagOf(input.input);
    const refused = await reserveHashtag(trx, subject, hashtag, now);
    if (!refused) continue;
    const credential = subject === ENVIRONMENT ? undefined : await findCredential(trx, subject);
    const account = credential ? `credential ${credential.name} (${credential.id})` : "the installation's Instagram account";
    throw validationError([{
      propertyName,
      message: `Instagram allows ${refused.limit} unique hashtags per account in 7 days: ${refused.used} of ${refused.limit} are used with ${account}, and #${hashtag} is not among them. The oldest, #${refused.oldest.hashtag}, frees up at ${iso(refused.oldest.freesAt)}.`,
      propertyValue: input.input,
      reason: 'quota instagram-hashtags',
      code: VALIDATION_CODES.range,
    }]);
  }
}
