/**
 * The module of Lemmy (docs/services.md#lemmy): its row and its connector. Public reads only: no
 * credential and no connect flow. Listed in `../index.ts`.
 */
import type { ServiceModule } from '../module.ts';
import { lemmy as connector } from './connector.ts';
import { row } from './row.ts';

export const lemmy = {
  name: 'lemmy',
  row,
  connector,
  // `!name@host`, `name@host`, `https://host/c/name` are one community; `words@host` and
  // `https://host/search?q=words` one search; without case (Lemmy matches community names and
  // search words so), runs of spaces as one.
  sourceForm(type, text) {
    const value = text.trim();
    if (type === 'community') {
      const url = /^https?:\/\/([^/]+)\/c\/([^/?#]+)\/?$/i.exec(value);
      return (url ? `${url[2]}@${url[1]}` : value.replace(/^!/, '')).toLowerCase();
    }
    let words = value;
    try {
      const url = /^https?:\/\//i.test(value) ? new URL(value) : null;
      if (url) words = `${url.searchParams.get('q') ?? ''}@${url.host}`;
    } catch {
      // compared as sent
    }
    return words.replace(/\s+/g, ' ').replace(/\s*@/, '@').toLowerCase();
  },
} as const satisfies ServiceModule<'lemmy'>;
