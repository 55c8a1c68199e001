/**
 * Bounds on what one filter may cost to run (docs/filters.md#bounds). Patterns run on re2js in
 * linear time, but the time per character grows with the compiled program: a rule over a
 * `[ab]{900}`-like pattern keeps hundreds of threads alive per character. So Sluice bounds the
 * compiled size of what a list and a set hold, and the text a rule reads per field; the time a
 * whole evaluation may take is bounded by the budgets of `pool.ts`.
 */

/**
 * Most compiled instructions (re2js `programSize()`, summed over patterns) in one `patterns`
 * list, and in one set: its inline patterns plus, for each rule or preCondition naming a
 * `patterns` list, that list's size again. A list of 10 000 word patterns such as
 * `/\bspamword42\b/i` is about 165 000.
 */
export const MAX_COMPILED_SIZE = 200_000;

/**
 * Characters of one field a rule reads per item: the field's string values are taken in order
 * and cut where their lengths add up to this; later values are not read.
 */
export const MAX_FIELD_CHARS = 20_000;
