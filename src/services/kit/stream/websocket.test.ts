/** The stream listeners' reconnection back-off (websocket.ts `backoffMs`), table-driven. */
import { describe, expect, it } from 'vitest';
import { backoffMs } from './websocket.ts';

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
