/** The stream listeners' reconnection back-off (websocket.ts `backoffMs`, `dropsInARow`), table-driven. */
import { describe, expect, it } from 'vitest';
import { backoffMs, dropsInARow } from './websocket.ts';

describe('backoffMs', () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [2, 5000],
    [3, 10_000],
    [4, 30_000],
    [50, 30_000],
    [-1, 1000],
  ])('after %i failures: %i ms', (failures, ms) => {
    expect(backoffMs(failures)).toBe(ms);
  });
});

describe('dropsInARow', () => {
  const now = 1_000_000;
  it.each([
    ['a connection that never opened', 2, null, 3],
    ['one dropped as soon as it opened', 2, now, 3],
    ['one open 30 s exactly', 2, now - 30_000, 3],
    ['one that lasted past 30 s', 4, now - 30_001, 0],
  ])('%s: %i before, %i after', (_name, failures, openedAt, after) => {
    expect(dropsInARow(failures, openedAt, now)).toBe(after);
  });
});
