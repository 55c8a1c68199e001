import { describe, expect, it } from 'vitest';
import { twitterPostsRead } from './quota.ts';

describe('X: posts a response read', () => {
  it.each([
    ['/2/tweets/search/recent', { data: [{}, {}, {}] }, 3],
    ['/2/users/2244994945/tweets', { data: [{}] }, 1],
    ['/2/tweets/search/recent', { meta: { result_count: 0 } }, 0],
    ['/2/users/by/username/xdevelopers', { data: { id: '1' } }, 0],
    ['/2/tweets/search/recent', null, 0],
    ['/2/tweets', { data: [{}, {}] }, 2],
    ['/2/tweets/123/liking_users', { data: [{}] }, 0],
  ])('X %s reads posts', (path, body, posts) => expect(twitterPostsRead(path, body)).toBe(posts));
});
