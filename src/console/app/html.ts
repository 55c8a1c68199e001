/**
 * `html`: htm bound to Preact's `h` (https://github.com/developit/htm): tagged templates instead
 * of JSX, so the console needs no JSX transform. `html\`<p class="x">${value}</p>\`` escapes
 * `value` like any Preact text; attributes take values, not strings to parse.
 */
export { html } from 'htm/preact';
