/**
 * GET /publication/customizations/{id}/versions (docs/api.md#customization-versions): every
 * PATCH keeps the state it replaces, newest first; a restore is a PATCH with an old version's
 * data and keeps a version in turn; another contract's token gets 403 without data; bad input
 * gets 400 naming the property; versions go with their customization.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helper.ts';
import { setupRecords } from './records.ts';

describe('customization versions', () => {
  it('keeps the previous state on every update, newest first, and a restore keeps one too', async () => {
    const { call, create, bodies, tenant } = await setupRecords();
    const created = await create('/publication/customizations', bodies.customization({ data: 'body{color:red}', description: 'first' }));
    const id = created._id as string;
    expect((await call('GET', `/publication/customizations/${id}/versions`)).json()).toEqual([]);

    const second = (await call('PATCH', `/publication/customizations/${id}`, { data: 'body{color:green}' })).json();
    expect(second.version).toBe('2');
    await call('PATCH', `/publication/customizations/${id}`, { data: 'body{color:blue}', name: 'Dark blue', active: false });

    const res = await call('GET', `/publication/customizations/${id}/versions`);
    expect(res.statusCode, res.body).toBe(200);
    const versions = res.json();
    expect(versions.map((v: { data: string }) => v.data)).toEqual(['body{color:green}', 'body{color:red}']);
    expect(versions[1]).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      customizationId: id,
      contractId: tenant.contract.id,
      name: 'Dark',
      type: 'css',
      data: 'body{color:red}',
      version: '1',
      description: 'first',
      active: true,
      lastModified: created.lastModified,
      lastModifiedBy: created.lastModifiedBy,
      replaced: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      replacedBy: created.createdBy,
    });
    expect(versions[0]).toMatchObject({ version: '2', name: 'Dark', active: true, lastModified: second.lastModified });

    // Restore the first version: a PATCH with its fields, which keeps the state it replaces.
    const { data, name, description, active } = versions[1];
    const restored = (await call('PATCH', `/publication/customizations/${id}`, { data, name, description, active })).json();
    expect(restored).toMatchObject({ data: 'body{color:red}', name: 'Dark', active: true, version: '4' });
    const after = (await call('GET', `/publication/customizations/${id}/versions`)).json();
    expect(after.map((v: { version: string; data: string; name: string; active: boolean }) => [v.version, v.data, v.name, v.active])).toEqual([
      ['3', 'body{color:blue}', 'Dark blue', false],
      ['2', 'body{color:green}', 'Dark', true],
      ['1', 'body{color:red}', 'Dark', true],
    ]);
    // Paging: count and offset.
    const page = (await call('GET', `/publication/customizations/${id}/versions?count=1&offset=1`)).json();
    expect(page.map((v: { version: string }) => v.version)).toEqual(['2']);
  });

  it('keeps no version when the update is refused', async () => {
    const { call, create, bodies } = await setupRecords();
    const { _id: id } = await create('/publication/customizations', bodies.customization());
    await create('/publication/customizations', bodies.customization({ name: 'Taken' }));
    expectError(await call('PATCH', `/publication/customizations/${id}`, { name: 'Taken' }), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
    expectError(await call('PATCH', `/publication/customizations/${id}`, { type: 'js' }), 400, { name: 'ValidationError', code: 1005, propertyName: 'type' });
    expect((await call('GET', `/publication/customizations/${id}/versions`)).json()).toEqual([]);
  });

  it("answers another contract's token 403 without data, an unknown id 404, bad input 400 naming the property", async () => {
    const { call, create, bodies, other, tenant } = await setupRecords();
    const { _id: id } = await create('/publication/customizations', bodies.customization({ data: 'body{color:#123456}' }));
    await call('PATCH', `/publication/customizations/${id}`, { data: 'body{color:#654321}' });

    const foreign = await call('GET', `/publication/customizations/${id}/versions`, undefined, other.token);
    const body = expectError(foreign, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(Object.keys(body).sort()).toEqual(['errors', 'requestId']);
    for (const secret of ['#123456', '#654321', tenant.contract.id, 'Dark']) expect(foreign.body).not.toContain(secret);

    expectError(await call('GET', '/publication/customizations/0123456789abcdef01234567/versions'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await call('GET', '/publication/customizations/nothex/versions'), 400, { name: 'ValidationError', code: 1005, propertyName: 'id' });
    expectError(await call('GET', `/publication/customizations/${id}/versions?count=0`), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
    const anonymous = await call('GET', `/publication/customizations/${id}/versions`, undefined, '');
    expect(anonymous.statusCode).toBe(401);
  });

  it('deletes the versions with their customization', async () => {
    const { call, create, bodies, db } = await setupRecords();
    const { _id: id } = await create('/publication/customizations', bodies.customization());
    await call('PATCH', `/publication/customizations/${id}`, { data: 'body{color:#fff}' });
    expect(await db.selectFrom('customizationVersions').select('id').where('customizationId', '=', id).execute()).toHaveLength(1);
    expect((await call('DELETE', `/publication/customizations/${id}`)).statusCode).toBe(204);
    expect(await db.selectFrom('customizationVersions').select('id').where('customizationId', '=', id).execute()).toHaveLength(0);
  });
});
