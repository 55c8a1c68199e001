/**
 * Matching of Mastodon streaming (docs/services.md#mastodon-streaming): which stream an input
 * listens to, which streamed statuses belong to it, and the grouping of the active inputs into
 * the streams (lease names) they want, with a credential per stream when the instance wants a
 * token. Pure but for {@link wantedStreams}, which resolves credentials.
 */
import type { InputRow } from '../../../store/tables.ts';
import { SourceError } from '../../connector.ts';
import { authorizationFor, parseMastodonInput } from '../connector.ts';
import { idOf, obj, type Json } from '../../kit/normalize.ts';
import type { StreamCredentials } from '../../kit/stream/collector.ts';

/** The stream an input listens to (before authentication): lease name, instance, request path. */
export interface MastodonStream {
  /** Lease name: `mastodon:<host>:hashtag:<tag>` or `mastodon:<host>:public:local`. */
  name: string;
  origin: string;
  host: string;
  /** Path and query of the SSE endpoint on the instance. */
  path: string;
}

/**
 * The stream of a Mastodon input (see the module), or null for an input that cannot stream: an
 * input the connector cannot read, or a user input whose account id is not known yet
 * (`accountId`, from its poll state). Tags are matched case-insensitively, as Mastodon does.
 */
export function streamOf(input: Pick<InputRow, 'type' | 'input'>, accountId: string | null): MastodonStream | null {
  let parsed;
  try {
    parsed = parseMastodonInput(input.type, input.input);
  } catch (error) {
    if (error instanceof SourceError) return null;
    throw error;
  }
  const { origin, host, name } = parsed;
  if (input.type === 'tag') {
    const tag = name.toLowerCase();
    return { name: `mastodon:${host}:hashtag:${tag}`, origin, host, path: `/api/v1/streaming/hashtag?${new URLSearchParams({ tag })}` };
  }
  if (input.type === 'user' && accountId) return { name: `mastodon:${host}:public:local`, origin, host, path: '/api/v1/streaming/public/local' };
  return null;
}

/** The account id a user input's polls looked up (the connector's state), or null. */
export function accountIdOf(input: Pick<InputRow, 'type' | 'input' | 'sourceState'>): string | null {
  if (input.type !== 'user') return null;
  const state = parseState(input.sourceState);
  return state.accountOf === input.input && typeof state.accountId === 'string' ? state.accountId : null;
}

/**
 * Whether a status from the stream belongs to an input: every status of a tag stream does (the
 * instance matched the tag); on the local public stream, the user input's account's statuses,
 * leaving out replies to other accounts (as the poll's `exclude_replies`).
 */
export function statusMatches(status: Json, input: { type: string; accountId: string | null }): boolean {
  if (input.type === 'tag') return true;
  const account = idOf(obj(status.account).id);
  if (!input.accountId || account !== input.accountId) return false;
  const replyTo = idOf(status.in_reply_to_account_id);
  return !idOf(status.in_reply_to_id) || replyTo === input.accountId;
}

/** The connector's state of an input (`sourceState`, JSON), or `{}` when it is not an object. */
export function parseState(sourceState: string): Record<string, unknown> {
  try {
    return obj(JSON.parse(sourceState));
  } catch {
    return {};
  }
}

/** An input listening to a stream, with its account id (user inputs). */
export interface Member {
  input: InputRow;
  accountId: string | null;
}

/** A stream the active inputs want: the stream, its request headers (a token or none) and its inputs. */
export interface WantedStream {
  stream: MastodonStream;
  headers: Record<string, string>;
  authenticated: boolean;
  members: Member[];
}

/**
 * The streams `inputs` want now, by lease name. On an instance of `needsToken` (origins that
 * answered 401/403 to an anonymous stream) an input listens with its contract's credential of
 * that instance, under the lease name `<stream>:<credential id>` (one stream per credential: a
 * contract's token is never used for another contract's inputs); an input without one is left
 * out (it stays polled).
 */
export async function wantedStreams(inputs: readonly InputRow[], needsToken: ReadonlySet<string>, credentials: StreamCredentials): Promise<Map<string, WantedStream>> {
  const want = new Map<string, WantedStream>();
  for (const input of inputs) {
    const accountId = accountIdOf(input);
    const stream = streamOf(input, accountId);
    if (!stream) continue;
    let name = stream.name;
    let headers: Record<string, string> = {};
    if (needsToken.has(stream.origin)) {
      const resolved = await credentials.resolve(input).catch(() => undefined);
      headers = resolved ? authorizationFor(resolved.services.mastodon, stream.origin) : {};
      if (!headers.authorization) continue; // no token for this instance: the input is polled
      name = `${name}:${resolved!.credential?.id ?? 'shared'}`;
    }
    const entry = want.get(name) ?? { stream, headers, authenticated: Boolean(headers.authorization), members: [] };
    entry.members.push({ input, accountId });
    want.set(name, entry);
  }
  return want;
}
