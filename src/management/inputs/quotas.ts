/**
 * The quota check of an input's creation or change (docs/api.md#quotas): an input of a service
 * with a hashtag quota (its module's `quota`; Instagram's `tag` inputs) counts its hashtag against its credential's 30 unique hashtags in 7 days (Meta's limit per
 * Instagram account) at once, in the transaction that stores the input, so that a batch, or two
 * requests at the same moment, cannot take the 31st. A hashtag that already counts is free. The
 * other quotas (YouTube units, X posts) are spent by polls: their inputs are accepted and wait
 * when the quota is spent (`collect/quotas.ts`).
 */
import type { Transaction } from 'kysely';
import type { Config } from '../../config.ts';
import { validationError, VALIDATION_CODES } from '../../errors.ts';
import { iso } from '../../lib/time.ts';
import { findCredential } from '../../store/credentials.ts';
import { serviceModule } from '../../services/index.ts';
import { ENVIRONMENT, quotaSubject, reserveHashtag } from '../../store/quotas.ts';
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
 * Counts the hashtag of each input with one (Instagram's `tag` inputs) in `inputs` against its credential at `now`,
 * inside `trx`. @throws ApiError 400 ValidationError (code 1003) naming `propertyName` (the
 * input's `input`) when one would be a 31st hashtag in 7 days; the caller's transaction then
 * rolls back whatever the others counted.
 */
export async function countHashtags(trx: Transaction<Database>, config: Config, inputs: { input: QuotaInput; propertyName: string }[], now: number): Promise<void> {
  for (const { input, propertyName } of inputs) {
    const rule = serviceModule(input.service)?.quota;
    if (rule?.kind !== 'hashtags') continue;
    const hashtag = rule.hashtagOf(input);
    if (hashtag === undefined) continue;
    const subject = await quotaSubject(trx, input, config.sharedCredentials && rule.hasInstallationCredential(config.services));
    if (!subject) continue;
    const refused = await reserveHashtag(trx, rule.name, subject, hashtag, now);
    if (!refused) continue;
    const credential = subject === ENVIRONMENT ? undefined : await findCredential(trx, input.contractId, subject);
    const account = credential ? `credential ${credential.name} (${credential.id})` : rule.installation;
    throw validationError([{
      propertyName,
      message: `${rule.vendor} allows ${refused.limit} unique hashtags per account in 7 days: ${refused.used} of ${refused.limit} are used with ${account}, and #${hashtag} is not among them. The oldest, #${refused.oldest.hashtag}, frees up at ${iso(refused.oldest.freesAt)}.`,
      propertyValue: input.input,
      reason: `quota ${rule.name}`,
      code: VALIDATION_CODES.range,
    }]);
  }
}
