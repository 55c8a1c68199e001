/**
 * Browser tests of the console (`src/console/`), shared by every screen's test file:
 *
 *   const sluice = await startConsole({ TOKEN_TTL: '5' });   // real server on 127.0.0.1, API_URL = its origin
 *   const page = await consolePage(browser);                 // desktop, or consolePage(browser, PHONE)
 *   await signIn(page, sluice);                              // from /console/ through the sign-in page
 *   await expectAccessible(page);                            // axe-core: no serious or critical violations
 *   await browser.close(); await sluice.close();              // the browser first (its open sockets would hold the close)
 *
 * Each server has its own SQLite database in a temporary folder with a contract "Acme News"
 * (collection "World News"), a user granted it (`sluice.user`), and the console client of the
 * migration. The console needs the build (`npm run build`; `npm test` builds first).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createContract, grant } from '../../src/store/contracts.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { buildUser } from '../helper.ts';

export { browserMissing, launch } from './harness.ts';

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 740 };

/** A free TCP port on loopback (API_URL must name the port before the server starts). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ConsoleServer {
  app: FastifyInstance;
  db: Db;
  config: Config;
  /** `http://127.0.0.1:<port>`: API_URL, AUTH_URL and QUEUE_URL. */
  origin: string;
  tenant: { contract: Awaited<ReturnType<typeof createContract>>; collection: Awaited<ReturnType<typeof createCollection>> };
  user: Awaited<ReturnType<typeof buildUser>>;
  close(): Promise<void>;
}

/** A listening Sluice for the console, with a tenant and a user granted it. */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', PORT: String(port), API_URL: origin, AUTH_URL: origin, QUEUE_URL: origin, ...env });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db });
  await app.listen({ host: '127.0.0.1', port });
  const contract = await createContract(db, 'Acme News', 'test');
  const collection = await createCollection(db, contract.id, { name: 'World News' }, 'test');
  const user = await buildUser(db, { name: 'Mia Moderator', username: 'mia', language: 'en' });
  await grant(db, user.consumer.id, contract.id);
  return {
    app,
    db,
    config,
    origin,
    tenant: { contract, collection },
    user,
    async close() {
      await app.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const reports = new WeakMap<Page, string[]>();

/**
 * A page in a fresh browser context (its own cookies and sessionStorage) at `viewport`. Messages
 * the browser logs about Content-Security-Policy violations are kept for `cspViolations`.
 */
export async function consolePage(browser: Browser, viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  // Fail at the step that waits, with its locator, well before the test's own timeout.
  page.setDefaultTimeout(8_000);
  const seen: string[] = [];
  reports.set(page, seen);
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) seen.push(message.text());
  });
  return page;
}

/** The CSP violations the browser reported on the page so far (expected: none). */
export function cspViolations(page: Page): string[] {
  return reports.get(page) ?? [];
}

/**
 * Opens `path` (default /console/) and signs in through Sluice's sign-in page as `user`
 * (default the server's); resolves when the console shows the screen's heading.
 */
export async function signIn(page: Page, sluice: ConsoleServer, path = '/console/', user: { username: string; password: string } = sluice.user): Promise<void> {
  await page.goto(`${sluice.origin}${path}`);
  await page.getByLabel('User name').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname.startsWith('/console/') && !url.searchParams.has('code'));
  await page.locator('#screen-title').waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules and best practices) on the page as it is and
 * fails with the list of serious and critical violations. axe is injected through the DevTools
 * protocol (`page.evaluate`), which the console's CSP does not govern: the page itself keeps
 * its strict policy.
 */
export async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((node) => node.target.join(' ')) }));
  });
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

/** Tabs (at most 40 presses) until the focused control's label, accessible name or text is `name`; throws when it never is. */
export async function tabTo(page: Page, name: string): Promise<void> {
  for (let presses = 0; presses < 40; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null;
      const label = element?.id ? document.querySelector(`label[for="${element.id}"]`)?.textContent : undefined;
      return (label ?? element?.getAttribute('aria-label') ?? element?.textContent ?? '').trim();
    });
    if (focused === name) return;
  }
  throw new Error(`Tab never reached ${name}.`);
}

/** Whether the page scrolls sideways (wider than the viewport). */
export const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
