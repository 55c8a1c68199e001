/**
 * The inputs (`jetstream-inputs.ts`) and the authors (`jetstream-authors.ts`) of the Jetstream
 * listener, against the AppView of the local fake Jetstream (test/fake-jetstream.ts) through the
 * collector's guarded fetch: handles resolved once, retried after a failure, at most 20 per
 * reading; profiles looked up once, paused after a failure, forgotten on an identity event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../../../collect/fetch.ts';
import { loadConfig } from '../../../config.ts';
import { type FakeJetstream, startFakeJetstream } from '../../../../test/fake-jetstream.ts';
import type { CollectContext } from '../../connector.ts';
import { blueskyDid, blueskyProfiles } from '../connector.ts';
import { authorCache, PROFILES_PAUSE_MS } from './jetstream-authors.ts';
import { type JetstreamInput, jetstreamInputs, RESOLVE_PER_REFRESH, RETRY_RESOLVE_MS } from './jetstream-inputs.ts';

let fake: FakeJetstream;
const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 5000 });
let context: () => CollectContext;
beforeAll(async () => {
  fake = await startFakeJetstream();
  context = () => ({ fetch: fetcher, services: loadConfig({ BLUESKY_API_URL: fake.apiUrl }).services, now: Date.now() });
});
afterAll(async () => {
  await fetcher.close();
  await fake.close();
});

const input = (id: string, type: string, query: string, lastModified = '1'): JetstreamInput => ({ id, type, input: query, lastModified, filterId: null, display: 0 });

describe('jetstreamInputs', () => {
  it('compiles the inputs once, again when one changes, and resolves a user once', async () => {
    fake.handles.set('alice.test', 'did:plc:alice');
    const errors: string[] = [];
    const inputs = jetstreamInputs<JetstreamInput>((handle) => blueskyDid(context(), handle), (handle) => errors.push(handle));
    const read = [input('k', 'keyword', 'sluice'), input('u', 'user', '@alice.test'), input('t', 'tag', 'ignored')];
    expect(await inputs.update(read, 0)).toBe(true);
    expect(inputs.matcher.ids).toEqual(new Set(['k', 'u']));
    expect(inputs.matcher.match({ did: 'did:plc:alice', text: '', tags: [], reply: false })).toEqual(['u']);
    expect(inputs.rows.get('t')?.type).toBe('tag');
    fake.handles.delete('alice.test'); // resolved already: not asked again
    expect(await inputs.update(read, 1)).toBe(false);
    expect(await inputs.update([read[0]!, input('u', 'user', '@alice.test', '2')], 2)).toBe(true);
    expect(inputs.matcher.ids).toEqual(new Set(['k', 'u']));
    expect(errors).toEqual([]);
  });

  it('leaves a user it cannot resolve out, and tries again only after RETRY_RESOLVE_MS', async () => {
    const errors: string[] = [];
    const inputs = jetstreamInputs<JetstreamInput>((handle) => blueskyDid(context(), handle), (handle) => errors.push(handle));
    const read = [input('u', 'user', 'nobody.test')];
    expect(await inputs.update(read, 0)).toBe(true);
    expect(inputs.matcher.ids.size).toBe(0);
    expect(await inputs.update(read, RETRY_RESOLVE_MS - 1)).toBe(false);
    fake.handles.set('nobody.test', 'did:plc:nobody');
    expect(await inputs.update(read, RETRY_RESOLVE_MS)).toBe(true);
    expect(inputs.matcher.ids).toEqual(new Set(['u']));
    expect(errors).toEqual(['nobody.test']);
  });

  it(`resolves at most ${RESOLVE_PER_REFRESH} handles per reading`, async () => {
    const many = Array.from({ length: RESOLVE_PER_REFRESH + 5 }, (_, i) => input(`u${i}`, 'user', `many${i}.test`));
    for (let i = 0; i < many.length; i++) fake.handles.set(`many${i}.test`, `did:plc:many${i}`);
    const inputs = jetstreamInputs<JetstreamInput>((handle) => blueskyDid(context(), handle), () => {});
    await inputs.update(many, 0);
    expect(inputs.matcher.ids.size).toBe(RESOLVE_PER_REFRESH);
    expect(await inputs.update(many, 1)).toBe(true);
    expect(inputs.matcher.ids.size).toBe(many.length);
  });
});

describe('authorCache', () => {
  it('looks each author up once, keeps the DID-only answer, and looks again after forget', async () => {
    const errors: unknown[] = [];
    const authors = authorCache((dids) => blueskyProfiles(context(), dids), (error) => errors.push(error));
    const before = fake.profileLookups;
    await authors.fill(['did:plc:ann', 'did:plc:ann', 'did:plc:ben'], 0);
    expect(authors.get('did:plc:ann')).toMatchObject({ handle: 'ann.test' });
    await authors.fill(['did:plc:ann'], 1);
    expect(fake.profileLookups - before).toBe(1);
    authors.forget('did:plc:ann');
    expect(authors.get('did:plc:ann')).toBeUndefined();
    await authors.fill(['did:plc:ann', 'did:plc:ben'], 2);
    expect(fake.profileLookups - before).toBe(2);
    expect(errors).toEqual([]);
  });

  it('pauses the lookups for PROFILES_PAUSE_MS after a failure, and never throws', async () => {
    const errors: unknown[] = [];
    const authors = authorCache((dids) => blueskyProfiles(context(), dids), (error) => errors.push(error));
    fake.failProfiles = true;
    try {
      await authors.fill(['did:plc:cat'], 1000);
      const before = fake.profileLookups;
      await authors.fill(['did:plc:cat'], 1000 + PROFILES_PAUSE_MS - 1);
      expect(fake.profileLookups).toBe(before);
    } finally {
      fake.failProfiles = false;
    }
    expect(errors).toHaveLength(1);
    expect(authors.get('did:plc:cat')).toBeUndefined();
    await authors.fill(['did:plc:cat'], 1000 + PROFILES_PAUSE_MS);
    expect(authors.get('did:plc:cat')).toMatchObject({ handle: 'cat.test' });
  });
});
