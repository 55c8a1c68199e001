/**
 * The module of Instagram (Graph API, through Facebook Login): its row, its connector, its quota
 * (30 unique hashtags per account in 7 days, counted when a `tag` input is stored and when a poll
 * would look its hashtag up; docs/api.md#quotas), and its connect flow: the long-lived token
 * (`../kit/graph.ts`) and the first Instagram business account of the user's pages
 * (`me/accounts?fields=instagram_business_account`). Listed in `../index.ts`.
 */
import { hashtagOf } from '../../lib/quota-windows.ts';
import type { HttpFetch } from '../../lib/oauth-client.ts';
import { longLivedCredential } from '../kit/graph.ts';
import { ConnectFailure, type ServiceModule } from '../module.ts';
import { instagram as connector } from './connector.ts';
import { row } from './row.ts';

/** The id of the first Instagram business account of the user's pages (Graph API `me/accounts`). @throws ConnectFailure when there is none. */
async function businessAccount(apiUrl: string, accessToken: string, fetch: HttpFetch): Promise<string> {
  const res = await fetch(`${apiUrl}/me/accounts?fields=instagram_business_account`, { authorization: `Bearer ${accessToken}`, accept: 'application/json' });
  if (res.status !== 200) throw new ConnectFailure('connect_failed', `the Graph API did not list the pages (HTTP ${res.status})`);
  const pages = (JSON.parse(Buffer.from(res.body).toString('utf8')) as { data?: { instagram_business_account?: { id?: unknown } }[] }).data ?? [];
  const id = pages.map((entry) => entry.instagram_business_account?.id).find((value) => typeof value === 'string');
  if (!id) throw new ConnectFailure('no_business_account', 'none of your Facebook pages has an Instagram business account linked');
  return id as string;
}

export const instagram = {
  name: 'instagram',
  row,
  connector,
  quota: {
    kind: 'hashtags',
    name: 'instagram-hashtags',
    variable: 'INSTAGRAM_ACCESS_TOKEN',
    installation: "the installation's Instagram account",
    vendor: 'Instagram',
    hasInstallationCredential: (services) => Boolean(services.instagram.accessToken),
    hashtagOf: (input) => (input.type === 'tag' ? hashtagOf(input.input) : undefined),
    pollHashtag(input, services) {
      if (input.type !== 'tag' || !services.instagram.accessToken || !services.instagram.userId) return undefined;
      // The connector keeps the hashtag id: no lookup, nothing counted.
      const name = input.input.trim().replace(/^[#@]/, '');
      const state = JSON.parse(input.sourceState) as Record<string, unknown>;
      if (state.tag === name && typeof state.hashtagId === 'string') return undefined;
      return hashtagOf(input.input);
    },
  },
  connect: {
    server: 'app',
    async credentialOf(tokens, { endpoint, fetch, services, now }) {
      const credential = await longLivedCredential(tokens, endpoint, fetch, now);
      credential.plain.userId = await businessAccount(services.instagram.apiUrl, credential.secret.accessToken!, fetch);
      return credential;
    },
  },
} as const satisfies ServiceModule<'instagram'>;
