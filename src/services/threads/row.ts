/**
 * The service table's row of threads (Meta's Threads API, graph.threads.net; docs/services.md#threads):
 * its input types, base URL, credential and the check of an input. Listed in `../table.ts`.
 *
 * - `keyword`: the words of a keyword search (`GET /keyword_search?q=`), 1 to 100 characters
 *   on one line (Meta documents no length; a search box's phrase, not a document).
 * - `user`, `mention`: the connected account itself, as `me` or its Threads username (`@name`:
 *   letters, digits, `.` and `_`, at most 30, as Instagram usernames, which Threads shares): Meta
 *   lists only the threads of, and the mentions of, the account whose token is used
 *   (developers.facebook.com/docs/threads/threads-media, /docs/threads/threads-mentions).
 */
import { type ServiceRow, secret } from '../kit/row.ts';

/** A Threads (Instagram) username, optionally with `@`: letters, digits, `.` and `_`, 1 to 30. */
export const THREADS_USERNAME = /^@?[A-Za-z0-9._]{1,30}$/;
/** The longest keyword input, in characters. */
export const MAX_KEYWORD = 100;

/** The problem with `input` for an input of `type`, or null (see the module docstring). */
export function checkThreadsInput(input: string, type: string | undefined): string | null {
  const text = input.trim();
  if (type === 'user' || type === 'mention') {
    return text === 'me' || THREADS_USERNAME.test(text)
      ? null
      : `input of a threads ${type} input must be me or the connected account's Threads username (letters, digits, . and _, at most 30)`;
  }
  // eslint-disable-next-line no-control-regex
  if (!text || text.length > MAX_KEYWORD || /[\u0000-\u001f\u007f]/.test(input)) {
    return `input of a threads keyword input must be 1 to ${MAX_KEYWORD} characters on one line`;
  }
  return null;
}

export const row = {
  types: ['keyword', 'user', 'mention'],
  urls: { apiUrl: ['THREADS_API_URL', 'https://graph.threads.net/v1.0'] },
  credentials: { accessToken: secret('THREADS_ACCESS_TOKEN') },
  credentialExpires: true,
  checkInput: (input, { type }) => checkThreadsInput(input, type),
} as const satisfies ServiceRow;
