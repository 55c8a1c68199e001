/**
 * The service table's row of bluesky (the Bluesky AppView and Jetstream; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret, plain } from '../kit/row.ts';

export const row = {
  types: ['keyword', 'user'],
  urls: {
    apiUrl: ['BLUESKY_API_URL', 'https://public.api.bsky.app'],
    /** The PDS that issues sessions (com.atproto.server.createSession) and proxies search for them. */
    pdsUrl: ['BLUESKY_PDS_URL', 'https://bsky.social'],
  },
  credentials: { identifier: plain('BLUESKY_IDENTIFIER'), appPassword: secret('BLUESKY_APP_PASSWORD') },
} as const satisfies ServiceRow;
