/**
 * The module of Reddit: its row and its connector (docs/services.md#reddit). No connect flow: the
 * Data API is read with an app's own token (application-only OAuth), from the app's client id and
 * secret in the environment or in a contract's credential. No quota rule: Reddit limits requests
 * per minute and client id, which the connector honours from its rate-limit headers. Listed in
 * `../index.ts`.
 */
import type { ServiceModule } from '../module.ts';
import { reddit as connector } from './connector.ts';
import { queryOf, row, subredditOf, userOf } from './row.ts';

export const reddit = {
  name: 'reddit',
  row,
  connector,
  // `pics`, `r/pics` and `https://www.reddit.com/r/Pics/` are one subreddit; `u/spez` and `spez`
  // one user; Reddit matches both names without case. Search words without case too.
  sourceForm(type, text) {
    const name = type === 'subreddit' ? subredditOf(text) : type === 'user' ? userOf(text) : queryOf(text);
    return (name ?? text.trim()).toLowerCase();
  },
} as const satisfies ServiceModule<'reddit'>;
