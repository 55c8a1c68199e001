/**
 * The module of X (Twitter): its row, its connector, and its quota, the posts read per month and
 * credential when TWITTER_MONTHLY_READ_CAP is set (docs/api.md#quotas; X "Usage" caps). X says how
 * many posts a call returns only once they are read, so a poll runs while one post is left and
 * then counts what it read. Listed in `../index.ts`.
 */
import { utcMonth } from '../../lib/quota-windows.ts';
import type { ServiceModule } from '../module.ts';
import { twitter as connector } from './connector.ts';
import { twitterPostsRead } from './quota.ts';
import { row } from './row.ts';

export const twitter = {
  name: 'twitter',
  row,
  connector,
  quota: {
    kind: 'units',
    name: 'twitter-posts',
    unit: 'posts read',
    when: 'this month (UTC)',
    variable: 'TWITTER_BEARER_TOKEN',
    limit: (settings) => settings.twitterMonthlyPosts,
    period: utcMonth,
    take: () => 1,
    cost(url, body, services) {
      const { apiUrl } = services.twitter;
      if (!url.startsWith(`${apiUrl}/`)) return 0;
      try {
        return twitterPostsRead(new URL(url.slice(apiUrl.length), 'http://x').pathname, JSON.parse(Buffer.from(body).toString('utf8')));
      } catch {
        return 0;
      }
    },
    chargesFailedCalls: false,
    needs: () => '',
  },
} as const satisfies ServiceModule<'twitter'>;
