/** How client addresses are grouped by the per-address limits (addresses.ts `addressGroup`). */
import { describe, expect, it } from 'vitest';
import { addressGroup } from './addresses.ts';

describe('addressGroup', () => {
  it.each([
    ['10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2::1', '2001:db8:1:2::'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::'],
    ['2001:0DB8:0001:0002:0000:0000:0000:0009', '2001:db8:1:2::'],
    ['2001:db8:1:3::1', '2001:db8:1:3::'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::1', '::'],
  ])('%s → %s', (address, group) => expect(addressGroup(address)).toBe(group));
});
