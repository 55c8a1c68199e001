/**
 * The moderators' queue stream ends when its access ends (issue 30 point 6, docs/api.md#queue-stream),
 * written as the attack: a stream opened with token T keeps being told of moderations, unpublished
 * items included, after T is revoked (RFC 7009), the grant is revoked (`admin revoke`) or the
 * consumer is disabled (`admin client disable`). Each case ends access, then a colleague with
 * access of their own moderates and an unpublished item arrives: the stream must end and never
 * carry them (checked by the stream ending before any later event, not by a clock).
 * Beside it the happy case: revoking another token of the same consumer leaves the stream open.
 * The team (issue 32): a member removed through the API (`DELETE …/members/{consumerId}`) loses
 * the stream, also when it keeps its tokens for another contract; a member demoted from moderator
 * to viewer keeps it (a viewer reads the queue: the stream needs no more than any grant).
 */
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { disableConsumer } from '../../src/store/consumers.ts';
import { createContract, grant, revokeGrant } from '../../src/store/contracts.ts';
import { build, buildClient, buildItem, buildTenant, buildUser, seedItems } from '../helper.ts';
import { connect } from './sse.ts';

/** The wait for a stream to end before it is declared still open (generous: the hub checks each second). */
const ENDS_WITHIN_MS = 8000;

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_secret', title: 'Held back for legal review' })], 'unpublished');
  // A colleague with access of their own, who moderates after the stream's access ended.
  const colleague = await buildClient(ctx.db, 'colleague');
  await grant(ctx.db, colleague.consumer.id, tenant.contract.id);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const path = `/v1/queue/${tenant.contract.slug}`;
  const q = `q=${tenant.collection.slug}`;
  const moderate = (id: string, state: string) =>
    fetch(`${base}${path}?${q}&id=${id}&access_token=${colleague.token}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state }) });
  const revoke = (token: string) =>
    fetch(`${base}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${tenant.clientId}:${tenant.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
    });
  /** Opens the stream with `token` and waits for a first arrival, so that it is known to be live. */
  const open = async (token: string) => {
    const stream = await connect(`${base}${path}/stream?${q}&access_token=${encodeURIComponent(token)}`);
    expect(stream.res.status).toBe(200);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_before', title: 'Arrived while allowed' })], 'unpublished');
    expect(JSON.parse((await stream.until(1))[0]!.data)).toMatchObject({ id: 'rss_before', state: 'unpublished' });
    return stream;
  };
  /** What happens after access ended, by the colleague and the collector: a moderation and an unpublished arrival. */
  const afterwards = async () => {
    expect((await moderate('rss_secret', 'published')).status).toBe(200);
    await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_after', title: 'Arrived after access ended' })], 'unpublished');
  };
  /** 'ended' when the server ends the stream, 'event' when another event came first, 'open' when neither within the wait. */
  const outcome = (stream: Awaited<ReturnType<typeof open>>) =>
    Promise.race([
      stream.ended.then(() => 'ended' as const),
      stream.until(2).then(() => 'event' as const),
      new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), ENDS_WITHIN_MS).unref()),
    ]);
  const ids = (stream: Awaited<ReturnType<typeof open>>) => stream.events.map((e) => JSON.parse(e.data).id as string);
  return { ...ctx, tenant, open, revoke, moderate, afterwards, outcome, ids };
}

describe('GET /v1/queue/{contract}/stream when access ends', () => {
  it('ends once its token is revoked (RFC 7009), sending nothing done after', { timeout: 30_000 }, async () => {
    const { tenant, open, revoke, afterwards, outcome, ids } = await setup();
    const stream = await open(tenant.token);
    expect((await revoke(tenant.token)).status).toBe(200);
    await afterwards();
    expect(await outcome(stream)).toBe('ended');
    expect(ids(stream)).toEqual(['rss_before']);
  });

  it('ends once the grant is revoked (admin revoke), sending nothing done after', { timeout: 30_000 }, async () => {
    const { db, tenant, open, afterwards, outcome, ids } = await setup();
    const stream = await open(tenant.token);
    expect(await revokeGrant(db, tenant.consumer.id, tenant.contract.id)).toBe(true);
    await afterwards();
    expect(await outcome(stream)).toBe('ended');
    expect(ids(stream)).toEqual(['rss_before']);
  });

  it('ends once the consumer is disabled (admin client disable), sending nothing done after', { timeout: 30_000 }, async () => {
    const { db, tenant, open, afterwards, outcome, ids } = await setup();
    const stream = await open(tenant.token);
    expect(await disableConsumer(db, tenant.consumer.id)).toBe(true);
    await afterwards();
    expect(await outcome(stream)).toBe('ended');
    expect(ids(stream)).toEqual(['rss_before']);
  });

  it('ends once its token is revoked even when nothing happens after', { timeout: 30_000 }, async () => {
    const { tenant, open, revoke, outcome } = await setup();
    const stream = await open(tenant.token);
    expect((await revoke(tenant.token)).status).toBe(200);
    expect(await outcome(stream)).toBe('ended');
  });

  it('stays open when another token of the same consumer is revoked', { timeout: 30_000 }, async () => {
    const { db, tenant, open, revoke, afterwards, outcome, ids } = await setup();
    const stream = await open(tenant.token);
    const { access_token: another } = await issueTokens(db, tenant.consumer.id, { ttlSeconds: 3600, withRefresh: false });
    expect((await revoke(another)).status).toBe(200);
    await afterwards();
    expect(await outcome(stream)).toBe('event');
    await stream.until(3);
    expect(ids(stream).sort()).toEqual(['rss_after', 'rss_before', 'rss_secret']);
    await stream.close();
  });

  it('ends once the member is removed from the team, whether its tokens are revoked (no other grant) or kept (another contract)', { timeout: 60_000 }, async () => {
    for (const keepsTokens of [false, true]) {
      const { db, app, tenant, open, afterwards, outcome, ids } = await setup();
      const elsewhere = await createContract(db, 'Other Desk', 'test');
      const user = await buildUser(db, { name: `Mo ${keepsTokens}` });
      await grant(db, user.consumer.id, tenant.contract.id, undefined, 'moderator');
      if (keepsTokens) await grant(db, user.consumer.id, elsewhere.id, undefined, 'viewer');
      const stream = await open(user.token);
      // The tenant's client is the contract's owner: it removes the member through the API.
      const removed = await app.inject({ method: 'DELETE', url: `/collection/contracts/${tenant.contract.id}/members/${user.consumer.id}`, headers: { authorization: `Bearer ${tenant.token}` } });
      expect(removed.statusCode, removed.body).toBe(204);
      await afterwards();
      expect(await outcome(stream)).toBe('ended');
      expect(ids(stream)).toEqual(['rss_before']);
    }
  });

  it('stays open when a moderator is demoted to viewer (a viewer reads the queue)', { timeout: 30_000 }, async () => {
    const { db, app, tenant, open, afterwards, outcome, ids } = await setup();
    const user = await buildUser(db, { name: 'Mo Moderator' });
    await grant(db, user.consumer.id, tenant.contract.id, undefined, 'moderator');
    const stream = await open(user.token);
    const demoted = await app.inject({ method: 'PATCH', url: `/collection/contracts/${tenant.contract.id}/members/${user.consumer.id}`, headers: { authorization: `Bearer ${tenant.token}` }, payload: { role: 'viewer' } });
    expect(demoted.statusCode, demoted.body).toBe(200);
    await afterwards();
    expect(await outcome(stream)).toBe('event');
    await stream.until(3);
    expect(ids(stream).sort()).toEqual(['rss_after', 'rss_before', 'rss_secret']);
    await stream.close();
  });
});
