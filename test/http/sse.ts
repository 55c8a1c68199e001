/**
 * A Server-Sent Events reader for HTTP tests: a streaming fetch that parses events as they
 * arrive (https://html.spec.whatwg.org/multipage/server-sent-events.html), used by the public
 * content stream's and the moderators' queue stream's tests.
 */
export interface Event {
  id?: string;
  event: string;
  data: string;
}

/** Connects to the stream and collects events as they arrive. */
export async function connect(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: Event[] = [];
  let comments = 0;
  let buffer = '';
  const waiters: (() => void)[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: Event = { event: 'message', data: '' };
          let hasData = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments++;
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) (event.data = line.slice(6)), (hasData = true);
          }
          if (hasData) events.push(event);
          while (waiters.length) waiters.shift()!();
        }
      }
    } catch {
      // aborted
    }
  })();
  /** Waits until `count` events arrived (the test's own timeout bounds the wait). */
  const until = async (count: number) => {
    while (events.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return events.slice(0, count);
  };
  const close = async () => {
    controller.abort();
    await reading;
  };
  /** Settles when the server ended the stream (or the client closed it). */
  const ended = reading;
  return { res, events, until, close, ended, comments: () => comments };
}


/**
 * The two streams a tenant's collection has open on the server at `base` (`http://host:port`): the
 * public content stream (`wall`, what a wall listens to) and the moderators' queue stream
 * (`queue`, with `owner.token`). Both are closed by the caller.
 */
export async function collectionStreams(base: string, owner: { contract: { slug: string }; collection: { slug: string }; token: string }) {
  const q = `q=${owner.collection.slug}`;
  const [wall, queue] = await Promise.all([connect(`${base}/v1/content/${owner.contract.slug}/stream?${q}`), connect(`${base}/v1/queue/${owner.contract.slug}/stream?${q}&access_token=${encodeURIComponent(owner.token)}`)]);
  return { wall, queue };
}
