/**
 * The module of the feeds (RSS, Atom, JSON Feed): its row, its connector, and push: a feed whose
 * poll found a WebSub hub (`rel="hub"`, kept in its source state as `websub`) is fed by that hub
 * (W3C WebSub §4-§8), and a pushed body is read as the feed it is, its Atom tombstones (RFC 6721)
 * included. Listed in `../index.ts`.
 */
import type { WebsubTarget } from '../kit/websub-hub.ts';
import { readFeed } from '../kit/feed-pool.ts';
import { canonicalUrl } from '../../lib/canonical-url.ts';
import type { ServiceModule } from '../module.ts';
import { rss as connector } from './connector.ts';
import { row } from './row.ts';

export const rss = {
  name: 'rss',
  row,
  connector,
  // Feed URLs: canonicalUrl (scheme and host case, `www.`, default ports, fragments, trailing
  // slashes, sorted query, tracking parameters; http and https one feed); unreadable as sent.
  sourceForm: (_type, text) => canonicalUrl(text) ?? text,
  push: {
    enabled: () => true,
    inputs: { stateContains: '"websub"' },
    targetOf(_input, state) {
      const websub = state.websub as Partial<WebsubTarget> | undefined;
      return typeof websub?.hub === 'string' && typeof websub.topic === 'string' ? { hub: websub.hub, topic: websub.topic } : undefined;
    },
    // A tombstone's ref means something only within its feed.
    deletions: 'source',
    itemsOf: async (body, contentType, topic, now) => {
      const { items, deleted } = await readFeed(body, contentType, topic, new Date(now));
      return { items, deleted };
    },
  },
} as const satisfies ServiceModule<'rss'>;
