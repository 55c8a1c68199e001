/**
 * The service table's row of pixelfed (Pixelfed instances' Mastodon-compatible API;
 * docs/services.md#pixelfed): its input types, no base URL (the instance is in the input), the
 * optional token of one instance, and the check of an input. Listed in `../table.ts`.
 */
import { INSTANCE_HOST, LOCAL_ORIGIN, type ServiceRow, secret, plain, optional } from '../kit/row.ts';

/** The paths of an instance URL that name a tag (`/discover/tags/x`, `/tags/x`) or an account (`/@user`, `/user`). */
const PATHS = '\\/(?:(?:discover\\/)?tags\\/[\\w.-]+|@?[\\w.-]+)\\/?';
/** `tag@host`, `user@host` (optionally `#`/`@` first), or an https tag or profile URL of an instance. */
const PIXELFED_INPUT = new RegExp(`^(?:[#@]?[\\w.-]+@${INSTANCE_HOST}|https:\\/\\/${INSTANCE_HOST}${PATHS})$`, 'i');
/** The same URLs of a local instance, `http://host:port/…` (only with ALLOW_PRIVATE_FETCH). */
const PIXELFED_LOCAL_INPUT = new RegExp(`^${LOCAL_ORIGIN}${PATHS}$`, 'i');

export const row = {
  types: ['tag', 'user'],
  // The instance is named in the input itself. A token is sent only to its own `instance`.
  urls: {},
  credentials: { accessToken: optional(secret('PIXELFED_ACCESS_TOKEN')), instance: optional(plain('PIXELFED_INSTANCE')) },
  checkInput: (input, { allowPrivateFetch }) =>
    PIXELFED_INPUT.test(input) || (allowPrivateFetch && PIXELFED_LOCAL_INPUT.test(input))
      ? null
      : `input must be tag@instance.host, user@instance.host, or an https tag or profile URL${allowPrivateFetch ? ' (or http://host:port/discover/tags/x, http://host:port/user)' : ''}`,
} as const satisfies ServiceRow;
