/**
 * Markdown from a source (Lemmy post bodies, docs/services.md#lemmy) as item HTML: CommonMark
 * rendered by markdown-it (pinned; the renderer of record for CommonMark in JavaScript) with raw
 * HTML off (`<b>` in the text stays text) and bare URLs made links (`linkify`), then the item
 * allow-list of `sanitize.ts` (`cleanHtml`): a `javascript:` link or an image of another scheme
 * does not survive, whatever the Markdown says.
 */
import MarkdownIt from 'markdown-it';
import { cleanHtml } from './sanitize.ts';

const renderer = new MarkdownIt({ html: false, linkify: true, typographer: false });

/** `markdown` (CommonMark text) as safe item HTML; '' for blank text. */
export function markdownHtml(markdown: string): string {
  return markdown.trim() ? cleanHtml(renderer.render(markdown)).trim() : '';
}
