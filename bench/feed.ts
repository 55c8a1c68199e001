/**
 * The rss feed the collection benchmarks poll (bench:dedupe, bench:events): a local HTTP server
 * on 127.0.0.1 whose every request answers the next `perPoll` items offered, an rss input of
 * the collection reading it, and the loop that polls it through the real collector until every
 * offered item was read.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { refreshInput } from '../src/collect/refresh.ts';
import type { ContentItem } from '../src/item.ts';
import { newRecordFields } from '../src/lib/time.ts';
import type { Db } from '../src/store/db.ts';
import { findInput, insertInputs } from '../src/store/inputs.ts';

export interface BenchFeed {
  /** Polls the input until every item of `items` was read (`perPoll` a poll); returns how many the collector stored. Throws when a poll reads nothing. */
  collect(items: ContentItem[], poll: Omit<Parameters<typeof refreshInput>[2], 'pollInterval'>): Promise<number>;
  close(): void;
}

const xml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Starts the feed server and stores an rss input `inputId` of the contract's collection reading it, displayed at once. */
export async function startBenchFeed(db: Db, target: { contractId: string; collectionId: string; inputId: string }, perPoll: number, now: number): Promise<BenchFeed> {
  let pending: ContentItem[] = [];
  const server = createServer((_req, res) => {
    const entries = pending.splice(0, perPoll);
    // No keep-alive: rounds between polls can outlast the server's idle timeout (ECONNRESET on reuse).
    res.writeHead(200, { 'content-type': 'application/rss+xml', connection: 'close' });
    res.end(
      `<?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title><link>https://example.com/</link><description>bench</description>${entries
        .map((item) => `<item><title>${xml(item.title!)}</title><link>${xml(item.url)}</link><guid isPermaLink="false">${item.id}</guid><description>${xml(item.text)}</description><pubDate>${new Date(item.date).toUTCString()}</pubDate></item>`)
        .join('')}</channel></rss>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { contractId, collectionId, inputId } = target;
  await db.transaction().execute((trx) =>
    insertInputs(trx, [
      {
        id: inputId, contractId, collectionId, service: 'rss', type: 'feed', input: `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`,
        filterId: null, latitude: null, longitude: null, radius: null, display: 1, active: 1, sourceState: '{}', lastRun: null, lastSuccess: null, lastError: null,
        nextRunAt: 0, failures: 0, collected: 0, rejected: 0, ...newRecordFields('bench', now),
      },
    ]),
  );
  return {
    async collect(items, poll) {
      pending = items;
      let collected = 0;
      while (pending.length) {
        const before = pending.length;
        collected += await refreshInput(db, (await findInput(db, contractId, inputId))!, { ...poll, pollInterval: 300 });
        if (pending.length === before) throw new Error(`the feed was not read: ${(await findInput(db, contractId, inputId))!.lastError}`);
      }
      return collected;
    },
    close: () => server.close(),
  };
}
