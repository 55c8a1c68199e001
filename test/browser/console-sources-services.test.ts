/**
 * The console's Sources screen adds one input of each service issue 38 brought (Reddit, Threads,
 * Pixelfed, Lemmy, Twitch chat, YouTube live chat, TikTok, LinkedIn), in Chromium: the service and
 * its types come from `GET /collection/services`, the input is saved inactive (the collector sends
 * nothing to the real services), its row shows, and the management API holds it with that
 * service, type and input. An input the service's check refuses is named at its field. Role and
 * label locators only; axe finds no serious violation.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, signIn, startConsole } from './console-harness.ts';

/** One input of each new service: [service, type, input, an input its check refuses]. */
const CASES: [service: string, type: string, input: string, refused: string][] = [
  ['reddit', 'subreddit', 'r/worldnews', 'r/world news'],
  ['threads', 'user', '@citydesk', 'city desk'],
  ['pixelfed', 'tag', 'photography@pixelfed.social', 'photography@127.0.0.1'],
  ['lemmy', 'community', '!technology@lemmy.world', '!technology@localhost'],
  ['youtube', 'live', 'jfKfPfyJRdk', 'https://www.youtube.com/live'],
  ['twitch', 'channel', 'newsroomlive', 'no'],
  ['tiktok', 'user', '@newsroom', 'news room'],
  ['linkedin', 'organization', 'urn:li:organization:2414183', 'urn:li:person:123'],
];

let browser: Browser;
let sluice: ConsoleServer;

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const sourcesPath = () => `/console/contracts/${sluice.tenant.contract.id}/sources?collection=${sluice.tenant.collection.id}`;
/** The texts of the elements that describe `control` (its hint and its error, aria-describedby). */
const description = (control: Locator) =>
  control.evaluate((element) => (element.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
/** The row of the table whose row header ends with `input`. */
const row = (page: Page, input: string) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`(^|\\s)${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });

describe.skipIf(browserMissing)('console Sources: the services of issue 38', () => {
  it('adds one input of each new service, its types as the API lists them; a refused input is named at its field', { timeout: 120_000 }, async () => {
    const token = encodeURIComponent(sluice.user.token);
    const services = (await sluice.app.inject({ url: `/collection/services?access_token=${token}` })).json() as { service: string; types: { type: string }[] }[];
    const typesOf = (name: string) => services.find((s) => s.service === name)?.types.map((t) => t.type);
    const page = await consolePage(browser);
    await signIn(page, sluice, sourcesPath());
    await page.getByRole('button', { name: 'Add source' }).click();
    for (const [service, type, input, refused] of CASES) {
      await page.getByLabel('Service').selectOption(service);
      await expect(page.getByLabel('Type').locator('option').allTextContents(), service).resolves.toEqual(typesOf(service));
      await page.getByLabel('Type').selectOption(type);
      const field = page.getByLabel('Input', { exact: true });
      // Inactive: the collector leaves it alone (no request to the real service).
      await page.getByRole('checkbox', { name: 'active (collected)' }).uncheck();
      await field.fill(refused);
      await page.getByRole('button', { name: 'Save source' }).click();
      await expect.poll(() => field.getAttribute('aria-invalid'), { message: `${service}: ${refused} refused` }).toBe('true');
      // The field shows the API's own refusal of that input (the same text a client of the API reads).
      const refusal = await sluice.app.inject({
        method: 'POST',
        url: `/collection/inputs?access_token=${token}`,
        payload: { contractId: sluice.tenant.contract.id, collectionId: sluice.tenant.collection.id, service, type, input: refused, active: false },
      });
      expect(refusal.statusCode, refusal.body).toBe(400);
      const [error] = (refusal.json() as { errors: { propertyName: string; message: string }[] }).errors;
      expect(error!.propertyName).toBe('input');
      await expect(description(field)).resolves.toContain(error!.message.replace(/^input /, ''));
      await field.fill(input);
      await page.getByRole('button', { name: 'Save source' }).click();
      // Saved: the form says so, and that an inactive input is not collected; its row shows.
      await page.getByRole('status').filter({ hasText: 'It is inactive: Sluice collects nothing from it until it is activated.' }).waitFor();
      await row(page, input).waitFor();
      if (service === CASES[0]![0]) await expectAccessible(page);
      await page.getByRole('button', { name: 'Add another' }).click();
    }
    const inputs = (await sluice.app.inject({ url: `/collection/inputs?contract_id=${sluice.tenant.contract.id}&collection_id=${sluice.tenant.collection.id}&access_token=${token}` })).json() as { service: string; type: string; input: string; active: boolean }[];
    expect(inputs.map(({ service, type, input, active }) => ({ service, type, input, active })).sort((a, b) => a.service.localeCompare(b.service))).toEqual(
      CASES.map(([service, type, input]) => ({ service, type, input, active: false })).sort((a, b) => a.service.localeCompare(b.service)),
    );
    await page.context().close();
  });
});
