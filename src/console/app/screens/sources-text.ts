/**
 * The Sources screen's words (screens/sources.ts), pure so that they are unit-tested
 * (test/console-sources-text.test.ts): the last error of an input in plain words, times relative
 * to now, the lines of pasted feed URLs, the answer of a poll now (docs/api.md#poll-now).
 */

const STATUS_WORDS: Record<number, string> = {
  401: 'the source asks for credentials',
  403: 'the source refused access',
  404: 'nothing was found at this address',
  410: 'the source is gone for good',
  429: 'the source asked to slow down',
  500: 'the source had an internal error',
  502: 'the source’s gateway failed',
  503: 'the source is unavailable for now',
  504: 'the source’s gateway timed out',
};

/**
 * `status.lastError` in plain words: an HTTP status the source answered gets its meaning
 * ("HTTP 404" → "Nothing was found at this address (HTTP 404)."); anything else (already a
 * sentence, e.g. "twitter is not configured: set TWITTER_BEARER_TOKEN") is shown as it is.
 */
export function plainError(lastError: string): string {
  if (/^not a feed\b/.test(lastError)) return `This address is not a feed: it is neither RSS, Atom nor JSON Feed (${lastError}).`;
  if (/^Request to .* timed out\b/.test(lastError)) return `The source did not answer in time (${lastError}).`;
  if (/^Request to .* failed\b/.test(lastError)) return `The source could not be reached (${lastError}).`;
  const match = /^HTTP (\d{3})\b/.exec(lastError);
  if (!match) return lastError;
  const words = STATUS_WORDS[Number(match[1])] ?? 'the source answered with an error';
  return `${words[0]!.toUpperCase()}${words.slice(1)} (${lastError}).`;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
export const absolute = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'medium' });

/** "2 minutes ago", "in 5 minutes": `iso` relative to `now` (ms). */
export function ago(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relative.format(seconds, 'second');
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86_400), 'day');
}

/** What each `status.feed.mode` means (docs/api.md#input-status), shown after the mode's own name. */
const FEED_MODES: Record<string, string> = {
  poll: 'fetched on its schedule',
  push: 'the source notifies Sluice (WebSub)',
  stream: 'a live connection to the source',
};

/** `status.feed.mode` in the interface's word and plain words: "push: the source notifies Sluice (WebSub)". */
export function feedModeText(mode: string): string {
  return FEED_MODES[mode] ? `${mode}: ${FEED_MODES[mode]}` : mode;
}

/** Pasted text → the non-empty lines, trimmed, each once, in order. */
export function feedLines(text: string): string[] {
  return [...new Set(text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean))];
}

/** What `POST /collection/inputs/{id}/poll` answers (docs/api.md#poll-now), as the words need it. */
export interface PollAnswer {
  status: 'ok' | 'error';
  items: number;
  title: string | null;
  error: string | null;
}

/**
 * A poll now's answer in plain words: `“The Guardian” answered: 12 new items.`, or the source's
 * error through `plainError`.
 */
export function pollResultText(answer: PollAnswer): string {
  if (answer.status === 'error') return `The source gave an error: ${plainError(answer.error ?? 'unknown error')}`;
  const who = answer.title ? `“${answer.title}”` : 'The source';
  const items = answer.items === 0 ? 'no new items' : `${answer.items} new item${answer.items === 1 ? '' : 's'}`;
  return `${who} answered: ${items}.`;
}
