/**
 * `Screen`: the frame of every screen: its `<h1>` (focused after navigation, so screen readers
 * announce the new screen), the document title, and an optional toolbar beside the heading.
 *
 *   html`<${Screen} title="Sources">…<//>`
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { html } from './html.ts';

/** Sets the document title to `<title> · Sluice console` while the component shows. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Sluice console`;
  }, [title]);
}

/** The frame of the module's description around `children`, with `actions` beside the heading. */
export function Screen({ title, actions, children }: { title: string; actions?: ComponentChildren; children?: ComponentChildren }) {
  useTitle(title);
  return html`<section class="screen" aria-labelledby="screen-title">
    <div class="screen__head">
      <h1 id="screen-title" tabindex="-1">${title}</h1>
      ${actions ? html`<div class="screen__actions">${actions}</div>` : null}
    </div>
    ${children}
  </section>`;
}
