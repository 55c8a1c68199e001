/**
 * How the Moderation screen (../moderation.ts) names and shows an item as plain words: pure
 * functions, no DOM. Item HTML is never injected (the module description of ../moderation.ts).
 */
import type { Duplicate, Item } from '../../resources.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * The plain text of source HTML, by string operations only: no parser that could run a handler
 * or load anything (Chromium reports an `onerror` attribute even in a `DOMParser` document).
 * Tags are dropped, `<script>`/`<style>` with their content, and character references decoded;
 * the result is rendered as text, so anything left over shows as characters, never as markup.
 */
export function plainText(source: string): string {
  if (!/[<&]/.test(source)) return source;
  return source
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6])\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

/** What a control names the item by: its title, else the start of its text (60 characters at most), else its id. */
export function labelOf(item: Pick<Item, 'id' | 'title' | 'text'>): string {
  const words = (item.title || plainText(item.text)).replace(/\s+/g, ' ').trim();
  return words ? (words.length > 60 ? `${words.slice(0, 57)}…` : words) : item.id;
}

/** What a Split off button names a duplicate by: its service and author, else its address, else its id. */
export function duplicateLabel(duplicate: Duplicate): string {
  const who = duplicate.author.name || duplicate.author.username;
  return who ? `${duplicate.service} by ${who}` : duplicate.url ? `${duplicate.service} ${duplicate.url}` : duplicate.id;
}
