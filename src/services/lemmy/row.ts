/**
 * The service table's row of lemmy (Lemmy instances' public API v3; docs/services.md#lemmy): its
 * input types, no base URL (the instance is in the input), no credential (public reads), and the
 * check of an input. Listed in `../table.ts`.
 */
import { INSTANCE_HOST, LOCAL_ORIGIN, type ServiceRow } from '../kit/row.ts';

/** A community name, optionally of another instance (`technology@lemmy.world`). */
const COMMUNITY = `[\\w]+(?:@${INSTANCE_HOST})?`;
/** The paths of an instance URL: a community page (`/c/name`) or a search (`/search?q=…`). */
const PATHS = `(?:\\/c\\/${COMMUNITY}\\/?|\\/search\\/?\\?[^#\\s]*\\bq=[^&#\\s]+[^#\\s]*)`;
/** `!community@host`, `community@host`, `words to search@host`, or an https community or search URL of an instance. */
const LEMMY_INPUT = new RegExp(`^(?:!?[\\w]+@${INSTANCE_HOST}|(?!https?:)[^@\\n]{1,200}@${INSTANCE_HOST}|https:\\/\\/${INSTANCE_HOST}${PATHS})$`, 'i');
/** The same URLs of a local instance, `http://host:port/…` (only with ALLOW_PRIVATE_FETCH). */
const LEMMY_LOCAL_INPUT = new RegExp(`^${LOCAL_ORIGIN}${PATHS}$`, 'i');

export const row = {
  types: ['community', 'search'],
  urls: {},
  credentials: {},
  checkInput: (input, { allowPrivateFetch }) =>
    LEMMY_INPUT.test(input.trim()) || (allowPrivateFetch && LEMMY_LOCAL_INPUT.test(input.trim()))
      ? null
      : `input must be !community@instance.host, words to search@instance.host, or an https community or search URL (https://host/c/name, https://host/search?q=words)${allowPrivateFetch ? ' (or the same on http://host:port)' : ''}`,
} as const satisfies ServiceRow;
