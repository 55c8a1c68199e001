/**
 * The Publication screen (issue 12): a placeholder until it is built. Replace this module; keep its
 * default export (the route table, `routes.ts`, loads it lazily).
 */
import { html } from '../html.ts';
import { Screen } from '../screen.ts';

export default function Publication() {
  return html`<${Screen} title="Publication"><p>This screen is not built yet.</p><//>`;
}
