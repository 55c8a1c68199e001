/**
 * The module of Pixelfed (docs/services.md#pixelfed): its row and its connector. No connect flow:
 * a contract's token (a Pixelfed personal access token, Settings → Applications) is given as its
 * credential (docs/api.md#credentials), with the instance it belongs to. Listed in `../index.ts`.
 */
import type { ServiceModule } from '../module.ts';
import { pixelfed as connector } from './connector.ts';
import { row } from './row.ts';

export const pixelfed = {
  name: 'pixelfed',
  row,
  connector,
  // `tag@host`, `#tag@host`, `https://host/tags/tag`, `https://host/discover/tags/tag` are one
  // tag; `user@host`, `@user@host`, `https://host/user`, `https://host/@user` one account;
  // without case (Pixelfed matches usernames and hashtags so).
  sourceForm(_type, text) {
    const url = /^https?:\/\/([^/]+)\/(?:(?:discover\/)?tags\/([^/?#]+)|@?([^/?#]+))\/?$/i.exec(text);
    return (url ? `${url[2] ?? url[3]}@${url[1]}` : text.replace(/^[#@]/, '')).toLowerCase();
  },
} as const satisfies ServiceModule<'pixelfed'>;
