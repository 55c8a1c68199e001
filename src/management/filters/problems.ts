/**
 * The filter module's problems (a rule or list entry the rule table of `filter/rules.ts`
 * refuses) as the API's validation entries: `path` is the propertyName, the kind picks the
 * validation code (docs/api.md).
 */
import { type Invalid, VALIDATION_CODES } from '../../errors.ts';
import type { FilterProblem } from '../../filter/rules.ts';

/** One validation entry per problem; `propertyValue` and `reason` when the problem has them. */
export function invalidOf(problems: readonly FilterProblem[]): Invalid[] {
  return problems.map(({ path, message, value, reason, kind }) => ({
    propertyName: path,
    message,
    ...(value !== undefined ? { propertyValue: value } : {}),
    ...(reason !== undefined ? { reason } : {}),
    code: VALIDATION_CODES[kind],
  }));
}
