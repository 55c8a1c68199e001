/**
 * The module of Mastodon: its row, its connector, and its connect flow, whose authorization
 * server is the user's own instance: Sluice registers its app there at the first connect
 * (`POST /api/v1/apps`, docs.joinmastodon.org/methods/apps/) and reuses it after, and the
 * credential keeps the instance beside the token. Its streaming listener is
 * `stream/streaming.ts`. Listed in `../index.ts`.
 */
import type { ServiceModule } from '../module.ts';
import { mastodon as connector } from './connector.ts';
import { row } from './row.ts';

/** The scope Sluice asks an instance for: reading public timelines. */
const SCOPE = 'read';

export const mastodon = {
  name: 'mastodon',
  row,
  connector,
  // `tag@host`, `#tag@host`, `https://host/tags/tag` are one tag; `user@host`, `@user@host`,
  // `https://host/@user` one account; without case (Mastodon matches names and tags so).
  sourceForm(_type, text) {
    const url = /^https?:\/\/([^/]+)\/(?:tags\/([^/?#]+)|@([^/?#]+))\/?$/i.exec(text);
    return (url ? `${url[2] ?? url[3]}@${url[1]}` : text.replace(/^[#@]/, '')).toLowerCase();
  },
  connect: {
    server: 'instance',
    scopes: [SCOPE],
    async register(instance, redirectUri, website, fetch) {
      const host = new URL(instance).host;
      let registered: { client_id?: unknown; client_secret?: unknown };
      try {
        const body = new URLSearchParams({ client_name: 'Sluice', redirect_uris: redirectUri, scopes: SCOPE, website }).toString();
        const res = await fetch(`${instance}/api/v1/apps`, { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, { method: 'POST', body });
        if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
        registered = JSON.parse(Buffer.from(res.body).toString('utf8'));
      } catch (error) {
        const blocked = (error as { kind?: string }).kind === 'blocked';
        throw new Error(blocked ? `${host} resolves to a non-public address` : `${host} did not register an app (${(error as Error).message}): is it a Mastodon instance?`);
      }
      if (typeof registered.client_id !== 'string' || typeof registered.client_secret !== 'string') {
        throw new Error(`${host} answered the app registration without client_id and client_secret`);
      }
      return { clientId: registered.client_id, clientSecret: registered.client_secret };
    },
    credentialOf: async (tokens, { instance }) => ({ secret: { accessToken: tokens.accessToken }, plain: { instance: instance! }, expiresAt: tokens.expiresAt ?? null }),
  },
} as const satisfies ServiceModule<'mastodon'>;
