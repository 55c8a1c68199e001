/**
 * The service table's row of mastodon (Mastodon instances' public API; docs/services.md): its input types, base URLs
 * and credentials read from the environment, and the check of an input. Listed in `../table.ts`.
 */
import { INSTANCE_HOST, LOCAL_ORIGIN, type ServiceRow, secret, plain, optional } from '../kit/row.ts';

/** `tag@host`, `user@host` (optionally `#`/`@` first), or an https tag or profile URL of an instance. */
const MASTODON_INPUT = new RegExp(`^(?:[#@]?[\\w.-]+@${INSTANCE_HOST}|https:\\/\\/${INSTANCE_HOST}\\/(?:tags\\/[\\w.-]+|@[\\w.-]+))$`, 'i');
/** A tag or profile URL of an instance named by `http://` with a port (a local instance; only with ALLOW_PRIVATE_FETCH). */
const MASTODON_LOCAL_INPUT = new RegExp(`^${LOCAL_ORIGIN}\\/(?:tags\\/[\\w.-]+|@[\\w.-]+)$`, 'i');

export const row = {
  types: ['tag', 'user'],
  // The instance is named in the input itself. A token is sent only to its own `instance`.
  urls: {},
  credentials: { accessToken: optional(secret('MASTODON_ACCESS_TOKEN')), instance: optional(plain('MASTODON_INSTANCE')) },
  checkInput: (input, { allowPrivateFetch }) =>
    MASTODON_INPUT.test(input) || (allowPrivateFetch && MASTODON_LOCAL_INPUT.test(input))
      ? null
      : `input must be tag@instance.host, user@instance.host, or an https tag or profile URL${allowPrivateFetch ? ' (or http://host:port/tags/x, http://host:port/@user)' : ''}`,
} as const satisfies ServiceRow;
