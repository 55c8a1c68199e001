/**
 * The service table's row of rss (RSS, Atom and JSON Feed documents; docs/services.md): its input types, base URLs
 * and credentials read from the environment, and the check of an input. Listed in `../table.ts`.
 */
import { type ServiceRow, isHttpUrl } from '../kit/row.ts';

export const row = {
  types: ['feed'],
  urls: {},
  credentials: {},
  checkInput: (input) => (isHttpUrl(input) ? null : 'input must be an absolute http(s) URL of a feed'),
  ownEntries: true,
  authorsByName: true,
} as const satisfies ServiceRow;
