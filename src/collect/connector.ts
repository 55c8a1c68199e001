/**
 * The shape every connector has (one module per service, listed in `connectors/index.ts`).
 *
 * A connector turns one input's query into content items (interface §2.8). It keeps whatever
 * it needs between polls (HTTP validators, cursors) in `state`, an opaque JSON object that the
 * store saves with the input and hands back on the next poll.
 */
import type { ContentItem } from './item.ts';

/** What a connector knows of the input it collects for (interface §2.3). */
export interface SourceInput {
  id: string;
  service: string;
  type: string;
  input: string;
  latitude?: number | null;
  longitude?: number | null;
  radius?: number | null;
}

/** A response read by the guarded fetcher (`collect/fetch.ts`); header names are lower-case. */
export interface SourceResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  /** The final URL after redirects. */
  url: string;
}

/** Outbound HTTP as the collector allows it: guarded, time- and size-limited (decisions §9). */
export type SourceFetch = (url: string, headers?: Record<string, string>) => Promise<SourceResponse>;

export interface CollectContext {
  fetch: SourceFetch;
}

export interface CollectResult {
  items: ContentItem[];
  /** Saved with the input and passed to the next `collect` call. */
  state: Record<string, unknown>;
}

export interface Connector {
  service: string;
  types: readonly string[];
  collect(input: SourceInput, state: Record<string, unknown>, ctx: CollectContext): Promise<CollectResult>;
}

/**
 * A failure of the source (HTTP error, rate limit, unreadable document). The collector records
 * `message` in the input's status and backs off; `retryAfterMs` (from `Retry-After` and the
 * like) sets the earliest next poll (decisions §9).
 */
export class SourceError extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SourceError';
    this.retryAfterMs = options.retryAfterMs;
  }
}
