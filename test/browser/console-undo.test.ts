/**
 * Undo and history on the console's Moderation screen in Chromium (issue 33 point 3): a bulk
 * unpublish of 12 items asks for confirmation naming 12, shows a notice with Undo, and Undo
 * publishes all 12 again (seen through the public content API too); 2 items go without asking;
 * an undo refused because the item changed since says so; a card's History names the moderator
 * and what they did; the keyboard-only path (`u` then `z`, and Shift+Tab to Undo then Enter);
 * Undo goes away after UNDO_MS (the page's clock moved on, not waited for); axe clean with the
 * dialog open and with the notice shown; at 375 px the notice and the dialog fit the screen.
 * Role and label locators.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNDO_MS } from '../../src/console/app/screens/moderation-limits.ts';
import { buildItem, seedItems } from '../helper.ts';
import { browserMissing, consolePage, type ConsoleServer, expectAccessible, launch, PHONE, signIn, startConsole } from './console-harness.ts';

let browser: Browser;
let sluice: ConsoleServer;

const MIN = 60_000;
const TITLES = Array.from({ length: 14 }, (_, i) => `Story ${String(i + 1).padStart(2, '0')}`);

beforeAll(async () => {
  browser = await launch();
  sluice = await startConsole();
  await seedItems(
    sluice.db,
    sluice.tenant,
    TITLES.map((title, i) => buildItem({ id: `rss_${i + 1}`, title, text: `Text of ${title}`, date: new Date(Date.now() - (i + 1) * MIN).toISOString() })),
  );
});

afterAll(async () => {
  // The browser first: a socket it opened without a request yet (a preconnect) keeps the
  // server's close waiting for the headers timeout.
  await browser?.close();
  await sluice?.close();
});

const screen = () => `/console/contracts/${sluice.tenant.contract.id}/moderation?collection=${sluice.tenant.collection.id}`;
const card = (page: Page, title: string) => page.getByRole('article', { name: title, exact: true });
const notice = (page: Page) => page.getByRole('status').filter({ has: page.locator('.moderation__notice-box') });

/** The titles the public content API publishes now (what readers and the wall see). */
async function published(): Promise<string[]> {
  const res = await fetch(`${sluice.origin}/v1/content/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}&since=0&count=100`);
  return ((await res.json()) as { title: string }[]).map((item) => item.title).sort();
}

/** Moderates through the API as another moderator would (the server's own user, by token). */
async function moderateElsewhere(id: string, state: string): Promise<void> {
  const res = await fetch(`${sluice.origin}/v1/queue/${sluice.tenant.contract.slug}?q=${sluice.tenant.collection.slug}&id=${id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sluice.user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state }),
  });
  expect(res.status).toBe(200);
}

async function selectStories(page: Page, titles: string[]): Promise<void> {
  for (const title of titles) await page.getByRole('checkbox', { name: `Select ${title}`, exact: true }).check();
}

describe.skipIf(browserMissing)('console: undo, history, confirmation', () => {
  it('bulk-unpublishes 12 after a confirmation naming 12, then Undo publishes all 12 again; 2 go without asking', { timeout: 90_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await card(page, 'Story 12').waitFor();
    const twelve = TITLES.slice(0, 12);
    await selectStories(page, twelve);
    await page.getByRole('button', { name: 'Unpublish selected (12)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Unpublish 12 items?' });
    await dialog.waitFor();
    // Nothing happened yet; the focus is in the dialog.
    expect(await published()).toHaveLength(14);
    expect(await page.evaluate(() => !!document.activeElement?.closest('dialog[open]'))).toBe(true);
    await expectAccessible(page);
    await dialog.getByRole('button', { name: 'Unpublish 12 items' }).click();
    await notice(page).getByText('Unpublished 12 items.').waitFor();
    await expect.poll(published).toEqual(TITLES.slice(12));
    await expectAccessible(page);
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: the 12 items are as before.').waitFor();
    await expect.poll(published).toEqual(TITLES);
    await expect.poll(() => card(page, 'Story 07').getByText('published', { exact: true }).count()).toBe(1);

    // Cancel asks nothing more and changes nothing.
    await selectStories(page, twelve);
    await page.getByRole('button', { name: 'Unpublish selected (12)' }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await published()).toEqual(TITLES);
    // The focus went back to the button that asked.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Unpublish selected');

    // Two items: no dialog.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.reload();
    await card(page, 'Story 13').waitFor();
    await selectStories(page, ['Story 13', 'Story 14']);
    await page.getByRole('button', { name: 'Unpublish selected (2)' }).click();
    await notice(page).getByText('Unpublished 2 items.').waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await expect.poll(published).toEqual(TITLES.slice(0, 12));
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: the 2 items are as before.').waitFor();
    await expect.poll(published).toEqual(TITLES);
  });

  it('an undo refused because the item changed since says so and changes nothing', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await page.getByRole('button', { name: 'Unpublish Story 05', exact: true }).click();
    await notice(page).getByText('Unpublished “Story 05”.').waitFor();
    // Another moderator publishes it again: the undo would override them.
    await moderateElsewhere('rss_5', 'published');
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Could not undo: “Story 05” was changed since. Nothing was undone.').waitFor();
    expect(await published()).toContain('Story 05');
  });

  it("a card's History names who did what", { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await page.getByRole('button', { name: 'Unpublish Story 03', exact: true }).click();
    await notice(page).getByText('Unpublished “Story 03”.').waitFor();
    await page.getByRole('button', { name: 'History of Story 03', exact: true }).click();
    const history = page.getByRole('list', { name: 'History of Story 03' });
    await history.getByRole('listitem').first().waitFor();
    expect(await history.getByRole('listitem').first().textContent()).toContain(`${sluice.user.consumer.name} unpublished it`);
    expect(await page.getByRole('button', { name: 'History of Story 03', exact: true }).getAttribute('aria-expanded')).toBe('true');
    // Undo, and the open History shows the undo on top.
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await expect.poll(async () => history.getByRole('listitem').first().textContent()).toContain('undid a change (published now)');
    expect(await history.getByRole('listitem').nth(1).textContent()).toContain('(undone since)');
  });

  it('a pin, a spotlight and an edit each show the notice, and Undo takes each back', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await page.getByRole('button', { name: 'Pin Story 04', exact: true }).click();
    await notice(page).getByText('Pinned “Story 04” at 1.').waitFor();
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: “Story 04” is as before.').waitFor();
    await page.getByRole('button', { name: 'Pin Story 04', exact: true }).waitFor();
    expect(await card(page, 'Story 04').getByText('Pinned 1').count()).toBe(0);

    await page.getByRole('button', { name: 'Spotlight Story 04', exact: true }).click();
    await notice(page).getByText('Put “Story 04” in the spotlight.').waitFor();
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: “Story 04” is as before.').waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Spotlight Story 04', exact: true }).getAttribute('aria-pressed')).toBe('false');

    await page.getByRole('button', { name: 'Edit Story 04', exact: true }).click();
    await page.getByRole('form', { name: 'Edit Story 04' }).getByLabel('Title').fill('Story four');
    await page.getByRole('form', { name: 'Edit Story 04' }).getByRole('button', { name: 'Save edit' }).click();
    await notice(page).getByText('Edited “Story four”.').waitFor();
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: “Story four” is as before.').waitFor();
    await card(page, 'Story 04').waitFor();
  });

  it('keyboard only: u then z undoes; Shift+Tab from the card reaches Undo; Undo goes away after UNDO_MS', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await page.clock.install();
    await signIn(page, sluice, screen());
    await card(page, 'Story 01').waitFor();
    await page.keyboard.press('j');
    await page.keyboard.press('u');
    await notice(page).getByText('Unpublished “Story 01”.').waitFor();
    await page.keyboard.press('z');
    await notice(page).getByText('Undone: “Story 01” is as before.').waitFor();
    await expect.poll(published).toContain('Story 01');
    // The list is read again after an undo: the card shows it published before the next key acts on it.
    await card(page, 'Story 01').getByRole('button', { name: 'Unpublish Story 01', exact: true }).waitFor();

    // From the card, back to the notice's Undo, Enter.
    await page.keyboard.press('u');
    await notice(page).getByText('Unpublished “Story 01”.').waitFor();
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toMatch(/^Undo/);
    await page.keyboard.press('Enter');
    await notice(page).getByText('Undone: “Story 01” is as before.').waitFor();
    // The focus stays in the notice, on its message (moved there by an effect after the text is painted).
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('[role="status"]') !== null)).toBe(true);
    await expect.poll(published).toContain('Story 01');

    // Undo is offered for UNDO_MS, then the notice keeps only its message.
    await card(page, 'Story 02').getByRole('button', { name: 'Unpublish Story 02', exact: true }).click();
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).waitFor();
    await page.clock.fastForward(UNDO_MS - 1000);
    expect(await notice(page).getByRole('button', { name: 'Undo', exact: true }).count()).toBe(1);
    await page.clock.fastForward(2000);
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).waitFor({ state: 'detached' });
    await notice(page).getByText('Unpublished “Story 02”.').waitFor();
    await moderateElsewhere('rss_2', 'published');
  });

  it('z pressed the moment the Undo notice appears undoes: the key does not wait for the effects of that render', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await card(page, 'Story 03').waitFor();
    // In the page: when the notice's Undo button is put in the document, press z at once, in the
    // microtask after that render (before its effects, which run after the paint).
    await page.evaluate(() => {
      const observer = new MutationObserver(() => {
        const offered = [...document.querySelectorAll('[role="status"] button')].some((button) => button.textContent?.trim() === 'Undo');
        if (!offered) return;
        observer.disconnect();
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'z', bubbles: true }));
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    await card(page, 'Story 03').getByRole('button', { name: 'Unpublish Story 03', exact: true }).click();
    await notice(page).getByText('Undone: “Story 03” is as before.').waitFor();
    await expect.poll(published).toContain('Story 03');
    await page.context().close();
  });

  it('u pressed as soon as the list read again after an undo lands acts on the current card: the key does not wait for that render\'s effects', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser);
    await signIn(page, sluice, screen());
    await card(page, 'Story 01').waitFor();
    await page.keyboard.press('j');
    await page.keyboard.press('u');
    await notice(page).getByText('Unpublished “Story 01”.').waitFor();
    // In the page: when the undo's read of the queue has its answer, press u in the next task,
    // after the new list is set and rendered but before that render's effects (after the paint).
    await page.evaluate(() => {
      const original = window.fetch;
      window.fetch = async (...args: Parameters<typeof fetch>) => {
        const response = await original(...args);
        const url = new URL(String(args[0] instanceof Request ? args[0].url : args[0]), location.href);
        if (/^\/v1\/queue\/[^/]+$/.test(url.pathname) && (!args[1]?.method || args[1].method === 'GET')) {
          window.fetch = original;
          const text = response.text.bind(response);
          response.text = async () => {
            const body = await text();
            setTimeout(() => {
              // The notice says "Undone" now (set before the list is read again); u replaces it.
              (window as { uPressed?: boolean }).uPressed = true;
              document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'u', bubbles: true }));
            }, 0);
            return body;
          };
        }
        return response;
      };
    });
    await page.keyboard.press('z');
    await page.waitForFunction(() => (window as { uPressed?: boolean }).uPressed === true);
    await notice(page).getByText('Unpublished “Story 01”.').waitFor();
    await expect.poll(published).not.toContain('Story 01');
    await moderateElsewhere('rss_1', 'published');
    await page.context().close();
  });

  it('at 375 px the dialog and the notice fit the screen and are accessible', { timeout: 60_000 }, async () => {
    const page = await consolePage(browser, PHONE);
    await signIn(page, sluice, screen());
    await card(page, 'Story 12').waitFor();
    await selectStories(page, TITLES.slice(0, 11));
    await page.getByRole('button', { name: 'Unpublish selected (11)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Unpublish 11 items?' });
    await dialog.waitFor();
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page);
    await dialog.getByRole('button', { name: 'Unpublish 11 items' }).click();
    await notice(page).getByText('Unpublished 11 items.').waitFor();
    const shown = (await page.locator('.moderation__notice-box').boundingBox())!;
    expect(shown.x).toBeGreaterThanOrEqual(0);
    expect(shown.x + shown.width).toBeLessThanOrEqual(PHONE.width);
    expect(shown.y + shown.height).toBeLessThanOrEqual(PHONE.height);
    await expectAccessible(page);
    await notice(page).getByRole('button', { name: 'Undo', exact: true }).click();
    await notice(page).getByText('Undone: the 11 items are as before.').waitFor();
    await expect.poll(published).toEqual(TITLES);
  });
});
