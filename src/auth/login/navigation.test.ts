/** Table of `navigationRefusal` (navigation.ts): which Fetch Metadata may reach the authorization endpoint. */
import { describe, expect, it } from 'vitest';
import { navigationRefusal } from './navigation.ts';

const NAV = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

// [case, headers, sameOrigin, the header the refusal names or null when allowed]
const CASES: [string, Record<string, string>, boolean, string | null][] = [
  ['no Fetch Metadata (older browser, other client)', {}, false, null],
  ['no Fetch Metadata, own form', {}, true, null],
  ['top-level navigation from another site', { ...NAV, 'sec-fetch-site': 'cross-site' }, false, null],
  ['top-level navigation typed in', { ...NAV, 'sec-fetch-site': 'none' }, false, null],
  ['own form posted from this origin', { ...NAV, 'sec-fetch-site': 'same-origin' }, true, null],
  ['own form posted from another site', { ...NAV, 'sec-fetch-site': 'cross-site' }, true, 'Sec-Fetch-Site'],
  ['own form posted from a sibling origin', { ...NAV, 'sec-fetch-site': 'same-site' }, true, 'Sec-Fetch-Site'],
  ['fetch()', { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'sec-fetch-site': 'same-origin' }, false, 'Sec-Fetch-Mode'],
  ["fetch({mode: 'no-cors'})", { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty' }, false, 'Sec-Fetch-Mode'],
  ['iframe', { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' }, false, 'Sec-Fetch-Dest'],
  ['mode alone, not a navigation', { 'sec-fetch-mode': 'websocket' }, false, 'Sec-Fetch-Mode'],
  ['destination alone, a worker', { 'sec-fetch-dest': 'worker' }, false, 'Sec-Fetch-Dest'],
  ['upper case is not the value', { 'sec-fetch-mode': 'NAVIGATE', 'sec-fetch-dest': 'document' }, false, 'Sec-Fetch-Mode'],
];

describe('navigationRefusal', () => {
  it.each(CASES)('%s', (_case, headers, sameOrigin, refused) => {
    const error = navigationRefusal(headers, { sameOrigin });
    if (refused === null) {
      expect(error).toBeUndefined();
      return;
    }
    expect(error?.status).toBe(403);
    expect(error?.entries[0]).toMatchObject({ name: 'ForbiddenError', code: 3001, propertyName: refused });
  });
});
