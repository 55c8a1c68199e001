import { expect, it } from 'vitest';
import { OPERATORS as ENGINE_OPERATORS } from './operators.ts';
import { OPERATORS as VALIDATED_OPERATORS } from './rule-kinds.ts';

// The set validator (rule-kinds.ts) and the engine (operators.ts) must know the same operators:
// a rule that saves must run, and a rule the engine runs must be accepted when saved.
it('the validator and the engine know the same operators', () => {
  expect(Object.keys(VALIDATED_OPERATORS).sort()).toEqual([...ENGINE_OPERATORS].sort());
});
