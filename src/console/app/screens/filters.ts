/**
 * The Filters screen (issue 12): a placeholder until it is built. Replace this module; keep its
 * default export (the route table, `routes.ts`, loads it lazily).
 */
import { html } from '../html.ts';
import { Screen } from '../screen.ts';

export default function Filters() {
  return html`<${Screen} title="Filters"><p>This screen is not built yet.</p><//>`;
}
