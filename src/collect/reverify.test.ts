import { describe, expect, it } from 'vitest';
import { batchesOf } from './reverify.ts';

const copy = (id: string, inputId: string, service = 'twitter') => ({ id, inputId, service });

// docs/services.md#re-verification: an item held by several collections is read once a beat.
describe('batchesOf', () => {
  it.each([
    ['one input: one group', [copy('t_1', 'a'), copy('t_2', 'a')], [{ service: 'twitter', inputId: 'a', ids: ['t_1', 't_2'] }]],
    ['two collections, copies interleaved: one group, through the input holding the most', [copy('t_1', 'a'), copy('t_1', 'b'), copy('t_2', 'b'), copy('t_2', 'a'), copy('t_3', 'b')],
      [{ service: 'twitter', inputId: 'b', ids: ['t_1', 't_2', 't_3'] }]],
    ['ids only one input holds go with it', [copy('t_1', 'a'), copy('t_2', 'b'), copy('t_1', 'b')],
      [{ service: 'twitter', inputId: 'b', ids: ['t_1', 't_2'] }]],
    ['disjoint inputs: one group each', [copy('t_1', 'a'), copy('t_2', 'b')],
      [{ service: 'twitter', inputId: 'a', ids: ['t_1'] }, { service: 'twitter', inputId: 'b', ids: ['t_2'] }]],
    ['services apart', [copy('t_1', 'a'), copy('y_1', 'c', 'youtube')],
      [{ service: 'twitter', inputId: 'a', ids: ['t_1'] }, { service: 'youtube', inputId: 'c', ids: ['y_1'] }]],
    ['nothing claimed', [], []],
  ] as const)('%s', (_name, due, expected) => {
    expect(batchesOf(due)).toEqual(expected);
  });
});
