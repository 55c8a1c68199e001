/** Checkpoints off the event loop (checkpointer.ts): the thread copies the log into the file; the connection only past its own limit. */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { WRITER_CHECKPOINT_PAGES } from './checkpointer.ts';
import { openDb } from './db.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pragma = async (db: ReturnType<typeof openDb>, name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as object)[0];

describe('SQLite checkpoints in a thread', () => {
  it('copies committed pages into the database file while the connection checkpoints only past its limit, and lets go of the file on close', async () => {
    const file = join(dir, 'a.db');
    const db = openDb(`sqlite:${file}`, { checkpoints: 'thread' });
    expect(await pragma(db, 'wal_autocheckpoint')).toBe(WRITER_CHECKPOINT_PAGES);
    await sql`create table t (id integer primary key, body text not null)`.execute(db);
    const body = 'x'.repeat(1000);
    // About 2 MB in 100 transactions: 500 pages of log, far below the connection's own limit.
    for (let i = 0; i < 100; i++) {
      await db.transaction().execute(async (trx) => {
        for (let j = 0; j < 20; j++) await sql`insert into t (body) values (${body})`.execute(trx);
      });
    }
    const deadline = Date.now() + 10_000;
    while (statSync(file).size < 2_000_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statSync(file).size).toBeGreaterThanOrEqual(2_000_000);
    await db.destroy();
    expect(existsSync(`${file}-wal`)).toBe(false);
    // Opened again (the thread takes it again), the rows are there.
    const again = openDb(`sqlite:${file}`, { checkpoints: 'thread' });
    expect(Number(await sql`select count(*) as n from t`.execute(again).then((r) => (r.rows[0] as { n: number }).n))).toBe(2000);
    await again.destroy();
  });

  it('leaves an in-memory database, and a process that does not ask for the thread, to SQLite', async () => {
    for (const db of [openDb('sqlite::memory:', { checkpoints: 'thread' }), openDb(`sqlite:${join(dir, 'b.db')}`)]) {
      expect(await pragma(db, 'wal_autocheckpoint')).toBe(1000);
      await db.destroy();
    }
  });
});
