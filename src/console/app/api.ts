/**
 * The console's one API client: every screen talks to Sluice through `api` (or `request`).
 *
 * - Adds `Authorization: Bearer <access token>` (`auth.ts`); bodies go and come as JSON.
 * - A non-2xx answer throws `ApiError` with the interface's error object: `status`,
 *   `errors[]` (`{name, message, propertyName?, code}`), `requestId`. Show it with `forms.ts`
 *   (`errorsFor` at a field by `propertyName`, `ErrorBanner` otherwise; 403 → "no access").
 * - 401 (token expired or revoked): the browser signs in again and comes back to the same
 *   address; the request never settles (the page goes away). Unsaved input is kept by `drafts.ts`.
 * - The network lost (fetch rejects): the request waits, the shell shows a banner with a Retry
 *   button (`network` store); Retry, or the browser coming back online, sends the waiting
 *   requests again, in the order they were made. While the browser says it is online (the first
 *   resend at the `online` event can still fail, or the server itself is down), they are also
 *   sent again by themselves, after 1, 2, 4 … seconds (at most 30). Screens need no code of
 *   their own for either case.
 *
 * `prefetch(path, query)` starts a read before the screen asking for it has loaded; that screen's
 * `api.get` of the same URL then takes its answer.
 *
 * `api.get('/collection/collections', {contract_id})` → parsed JSON; `api.post(path, body)`,
 * `api.patch`, `api.put`, `api.del`. Paths are on API_URL; pass an absolute URL for the queue
 * (`${config.queueUrl}/v1/queue/…`) or the auth API.
 */
import type { ErrorObject } from './api.gen.ts';
import { accessToken, signIn, signInWorked } from './auth.ts';
import { config } from './config.ts';
import { createStore } from './store.ts';

/**
 * An entry of the error object's `errors` (docs/api.md#errors, `ErrorObject` of the OpenAPI
 * document); `code` is absent from the errors the console makes itself.
 */
export type ErrorEntry = Omit<ErrorObject['errors'][number], 'code'> & { code?: number };

/** An error answer of the API: the interface's error object, with the HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: ErrorEntry[];
  readonly requestId: string | undefined;
  constructor(status: number, errors: ErrorEntry[], requestId?: string) {
    super(errors.map((entry) => entry.message).join(' ') || `The server answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.errors = errors;
    this.requestId = requestId;
  }
}

/** Whether the network is lost, and how many requests wait for it. */
export const network = createStore<{ lost: boolean; waiting: number }>({ lost: false, waiting: 0 });
let waiting: (() => void)[] = [];
/**
 * Whether a waiting request is being sent again: until the last of them is answered, a new
 * request goes behind them, so that a read made after a change never overtakes it.
 */
let replaying = false;

/** The automatic resend (`retryLater`) and the delay of the next one (ms). */
let automatic: ReturnType<typeof setTimeout> | undefined;
let backoffMs = 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Sends the requests that wait for the network again (the banner's Retry, or `online`), one after
 * the other in the order they were made, so that a change made while offline lands before a read
 * made after it (requests made meanwhile go behind them); the first that fails again stops the
 * rest, which keep waiting.
 */
export function retryWaiting(): void {
  clearTimeout(automatic);
  automatic = undefined;
  const next = waiting.shift();
  replaying = next !== undefined;
  network.set({ lost: false, waiting: waiting.length });
  next?.();
}

if (typeof window !== 'undefined') window.addEventListener('online', () => waiting.length && retryWaiting());

/**
 * Sends the waiting requests again after a delay that doubles with every failure, while the
 * browser says it is online: an offline browser waits for Retry or its `online` event instead.
 */
function retryLater(): void {
  if (automatic !== undefined || typeof navigator === 'undefined' || !navigator.onLine) return;
  automatic = setTimeout(retryWaiting, backoffMs);
  backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Send without the access token (public endpoints). */
  anonymous?: boolean;
  /** Called with the headers of a success answer (e.g. a moderation's `Audit-Id`, docs/api.md#moderation). */
  onHeaders?: (headers: Headers) => void;
}

function urlOf(path: string, query?: Query): string {
  const url = new URL(/^https?:/.test(path) ? path : `${config.apiUrl}${path}`);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  return url.toString();
}

async function send(method: string, url: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = accessToken();
  if (token && !options.anonymous) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const init: RequestInit = { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) };
  let resent = false;
  if (replaying || waiting.length) {
    // Requests made before this one wait for the network or are being sent again: in order.
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      network.set({ ...network.get(), waiting: waiting.length });
    });
    resent = true;
  }
  for (;;) {
    try {
      const response = await fetch(url, init);
      backoffMs = 1000;
      // Answered after waiting: the next waiting request may go.
      if (resent) retryWaiting();
      return response;
    } catch {
      // fetch rejects only when no answer came: wait for Retry (or `online`), then send again; a
      // request that was already waiting keeps its place at the head of the line.
      await new Promise<void>((resolve) => {
        if (resent) waiting.unshift(resolve);
        else waiting.push(resolve);
        network.set({ lost: true, waiting: waiting.length });
        retryLater();
      });
      resent = true;
    }
  }
}

/** Sends one request; resolves to the parsed JSON body (undefined for an empty one). */
export async function request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(method, urlOf(path, options.query), options);
  if (response.status === 401 && !options.anonymous) return signIn();
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const object = (body ?? {}) as { errors?: ErrorEntry[]; requestId?: string };
    const errors = Array.isArray(object.errors) ? object.errors : [{ name: 'HttpError', message: `The server answered ${response.status} ${response.statusText}.` }];
    throw new ApiError(response.status, errors, object.requestId ?? response.headers.get('x-request-id') ?? undefined);
  }
  if (!options.anonymous) signInWorked();
  options.onHeaders?.(response.headers);
  return body as T;
}

/** How long a read started by `prefetch` waits for the screen that asks for it (ms). */
const PREFETCH_MS = 5000;
const prefetched = new Map<string, { at: number; answer: Promise<unknown> }>();

/**
 * Starts `GET path?query` now, before the screen that needs it is loaded (main.ts, at start-up:
 * the contract's collections while the session loads), so its answer does not wait for the
 * screen's code. The first `api.get` of the same URL within `PREFETCH_MS` takes this answer
 * (or its error) instead of asking again; any later one asks the API.
 */
export function prefetch(path: string, query?: Query): void {
  const url = urlOf(path, query);
  if (prefetched.has(url)) return;
  const answer = request('GET', path, { query });
  // Reported by the screen that takes it; never an "unexpected error" of its own.
  answer.catch(() => undefined);
  prefetched.set(url, { at: Date.now(), answer });
}

/** The answer `prefetch` started for `url`, once, if still fresh. */
function takePrefetched(url: string): Promise<unknown> | undefined {
  const early = prefetched.get(url);
  prefetched.delete(url);
  return early && Date.now() - early.at < PREFETCH_MS ? early.answer : undefined;
}

export const api = {
  get: <T = unknown>(path: string, query?: Query) => (takePrefetched(urlOf(path, query)) as Promise<T> | undefined) ?? request<T>('GET', path, { query }),
  post: <T = unknown>(path: string, body?: unknown, query?: Query) => request<T>('POST', path, { body, query }),
  patch: <T = unknown>(path: string, body?: unknown, query?: Query) => request<T>('PATCH', path, { body, query }),
  put: <T = unknown>(path: string, body?: unknown, query?: Query) => request<T>('PUT', path, { body, query }),
  del: <T = unknown>(path: string, body?: unknown, query?: Query) => request<T>('DELETE', path, { body, query }),
};
