/**
 * The display controls (docs/api.md#display-controls) through the management API on a real
 * database: `POST /collection/collections/{id}/display` stores the state, the collection shows it,
 * the audit trail records who changed it; another contract's token and a bad state are refused;
 * the content stream tells a display page (`display=true`) the state on opening and each change,
 * and tells nothing to other readers. And the display settings (`publication.display`) are
 * validated like the rest of the publication settings.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';
import { connect } from './sse.ts';

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

describe('POST /collection/collections/{id}/display', () => {
  it('stores the state, shows it on the collection and records it in the audit trail', async () => {
    const { call, tenant } = await setupRecords();
    const path = `/collection/collections/${tenant.collection.id}`;
    expect((await call('GET', path)).json().displayState).toBe('live');
    for (const state of ['blank', 'paused', 'live', 'blank']) {
      const res = await call('POST', `${path}/display`, { state });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ _id: tenant.collection.id, displayState: state });
      expect((await call('GET', path)).json().displayState).toBe(state);
    }
    const listed = (await call('GET', `/collection/collections?contract_id=${tenant.contract.id}`)).json();
    expect(listed.find((c: { _id: string }) => c._id === tenant.collection.id).displayState).toBe('blank');
    const audit = (await call('GET', `/collection/audit?contract_id=${tenant.contract.id}&action=display`)).json();
    expect(audit).toHaveLength(4);
    expect(audit[0]).toMatchObject({ resource: 'collection', resourceId: tenant.collection.id, action: 'display', before: { displayState: 'live' }, after: { displayState: 'blank' } });
    expect(audit[0].consumer.name).toBeTruthy();
  });

  it("refuses another contract's token (403, nothing changed) and an unknown collection (404)", async () => {
    const { call, tenant, other } = await setupRecords();
    const path = `/collection/collections/${tenant.collection.id}`;
    const theirs = expectError(await call('POST', `${path}/display`, { state: 'blank' }, other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(theirs)).not.toContain(tenant.contract.id);
    expect((await call('GET', path)).json().displayState).toBe('live');
    expect((await call('GET', `/collection/audit?contract_id=${tenant.contract.id}&action=display`)).json()).toEqual([]);
    expectError(await call('POST', '/collection/collections/0123456789abcdef01234567/display', { state: 'blank' }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expect((await call('POST', `${path}/display`, { state: 'blank' }, 'not-a-token')).statusCode).toBe(401);
  });

  it('refuses a bad state with 400 naming state', async () => {
    const { call, tenant } = await setupRecords();
    const path = `/collection/collections/${tenant.collection.id}/display`;
    expectError(await call('POST', path, { state: 'off' }), 400, v(1004, 'state'));
    expectError(await call('POST', path, { state: 'BLANK' }), 400, v(1004, 'state'));
    expectError(await call('POST', path, { state: 1 }), 400, v(1002, 'state'));
    expectError(await call('POST', path, {}), 400, v(1001, 'state'));
    expect((await call('GET', `/collection/collections/${tenant.collection.id}`)).json().displayState).toBe('live');
  });

  it('reaches the content stream of a display page: the state at once, then each change; other readers get none', { timeout: 20_000 }, async () => {
    const ctx = await setupRecords();
    const { call, tenant, app } = ctx;
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/v1/content/${tenant.contract.slug}/stream?q=${tenant.collection.slug}`;
    expect((await call('POST', `/collection/collections/${tenant.collection.id}/display`, { state: 'blank' })).statusCode).toBe(200);
    const screen = await connect(`${url}&display=true`);
    const reader = await connect(url);
    const [opened] = await screen.until(1);
    expect(opened).toEqual({ event: 'display', data: '{"state":"blank"}' });
    expect(opened!.id).toBeUndefined();
    for (const state of ['live', 'paused']) expect((await call('POST', `/collection/collections/${tenant.collection.id}/display`, { state })).statusCode).toBe(200);
    // Each change is sent once the stream polls it (within a poll of 500 ms); two quick changes may arrive as the last one.
    while (JSON.parse(screen.events.at(-1)!.data).state !== 'paused') await screen.until(screen.events.length + 1);
    expect(screen.events.every((e) => e.event === 'display')).toBe(true);
    expect(reader.events).toEqual([]);
    await screen.close();
    await reader.close();
  });
});

describe('publication.display settings', () => {
  it('stores and shows them; refuses out-of-range values and a QR URL that is not https, naming the property', async () => {
    const { call, tenant } = await setupRecords();
    const patch = (display: Record<string, unknown>) => call('PATCH', `/collection/collections/${tenant.collection.id}`, { publication: { display } });
    const display = { mode: 'carousel', dwellSeconds: 6, perSlide: 2, shuffle: true, header: '#SluiceCon', qrUrl: 'https://example.com/join', pinnedEvery: 5 };
    const res = await patch(display);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().publication).toEqual({ display });
    expectError(await patch({ mode: 'slideshow' }), 400, v(1004, 'publication.display.mode'));
    expectError(await patch({ dwellSeconds: 1 }), 400, v(1003, 'publication.display.dwellSeconds'));
    expectError(await patch({ dwellSeconds: 2.5 }), 400, v(1002, 'publication.display.dwellSeconds'));
    expectError(await patch({ perSlide: 9 }), 400, v(1003, 'publication.display.perSlide'));
    expectError(await patch({ pinnedEvery: 0 }), 400, v(1003, 'publication.display.pinnedEvery'));
    expectError(await patch({ header: '' }), 400, v(1003, 'publication.display.header'));
    expectError(await patch({ shuffle: 'yes' }), 400, v(1002, 'publication.display.shuffle'));
    for (const qrUrl of ['javascript:alert(1)', 'http://example.com/join', 'https://user:pw@example.com/', 'not a url']) {
      expectError(await patch({ qrUrl }), 400, v(1005, 'publication.display.qrUrl'));
    }
    expectError(await patch({ qrUrl: `https://example.com/${'a'.repeat(600)}` }), 400, v(1003, 'publication.display.qrUrl'));
    expect((await call('GET', `/collection/collections/${tenant.collection.id}`)).json().publication).toEqual({ display });
  });
});
