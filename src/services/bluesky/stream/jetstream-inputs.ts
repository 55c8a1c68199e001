/**
 * The inputs the Jetstream listener serves (docs/services.md#bluesky-jetstream): every active
 * bluesky input of the installation, compiled into one matcher (`jetstream-match.ts`) when their
 * ids, queries, filters or `lastModified` change. A user input's handle is resolved to its DID
 * once (kept for the process); a handle that fails is tried again after `RETRY_RESOLVE_MS`, and at
 * most `RESOLVE_PER_REFRESH` are resolved per reading (the others wait for the next), so a
 * reading stays short. Until resolved, a user input is not served (it stays polled).
 */
import { LRUCache } from 'lru-cache';
import type { InputRow } from '../../../store/tables.ts';
import { compileMatcher, type Matcher, type MatchInput } from './jetstream-match.ts';

/** A handle that failed to resolve is tried again after this long, ms. */
export const RETRY_RESOLVE_MS = 60_000;
/** Handles resolved per reading of the inputs, at most. */
export const RESOLVE_PER_REFRESH = 20;

/** What the listener reads of an input. */
export type JetstreamInput = Pick<InputRow, 'id' | 'type' | 'input' | 'lastModified' | 'filterId' | 'display'>;

/** The served inputs, as last read. */
export interface JetstreamInputs<I extends JetstreamInput = InputRow> {
  /** The inputs as last read, by id. */
  readonly rows: ReadonlyMap<string, I>;
  /** The matcher of the inputs served (`matcher.ids`). */
  readonly matcher: Matcher;
  /**
   * Takes the inputs just read (`now`: ms); recompiles the matcher when they changed or a handle
   * is due for resolving, and answers whether it did. Never throws: a handle that fails to
   * resolve is handed to `onError` and retried later.
   */
  update(inputs: I[], now: number): Promise<boolean>;
}

/** No input yet; handles are resolved by `resolveDid` (`blueskyDid` with the listener's fetch). */
export function jetstreamInputs<I extends JetstreamInput = InputRow>(resolveDid: (handle: string) => Promise<string>, onError: (handle: string, error: unknown) => void): JetstreamInputs<I> {
  const dids = new LRUCache<string, string>({ max: 100_000 });
  const unresolved = new LRUCache<string, number>({ max: 100_000 });
  const due = (input: I, now: number) => input.type === 'user' && !dids.has(input.input) && (unresolved.get(input.input) ?? 0) <= now;
  let signature = '';
  const self = {
    rows: new Map<string, I>() as ReadonlyMap<string, I>,
    matcher: compileMatcher([]),
    async update(inputs: I[], now: number) {
      const next = inputs.map((i) => `${i.id}\t${i.type}\t${i.input}\t${i.lastModified}\t${i.filterId}\t${i.display}`).join('\n');
      self.rows = new Map(inputs.map((i) => [i.id, i]));
      if (next === signature && !inputs.some((i) => due(i, now))) return false;
      signature = next;
      const compiled: MatchInput[] = [];
      let resolving = 0;
      for (const input of inputs) {
        if (input.type === 'keyword') compiled.push({ id: input.id, type: 'keyword', query: input.input });
        if (input.type !== 'user') continue;
        if (due(input, now) && resolving++ < RESOLVE_PER_REFRESH) {
          try {
            dids.set(input.input, await resolveDid(input.input));
          } catch (error) {
            unresolved.set(input.input, now + RETRY_RESOLVE_MS);
            onError(input.input, error);
          }
        }
        const did = dids.get(input.input);
        if (did) compiled.push({ id: input.id, type: 'user', query: did });
      }
      self.matcher = compileMatcher(compiled);
      return true;
    },
  };
  return self;
}
