/**
 * Publication settings (docs/api.md#publication-settings) through the management API, on a real
 * database: PATCH/POST `publication` and it is shown on GET (always, `{}` when none); a theme whose
 * colours fail WCAG 2.2 AA contrast is refused naming the pair; URLs must be https; bad
 * languages and unknown values are refused naming the property; another contract's collection
 * is 403 as for every record; and the wall applies what is stored.
 */
import { describe, expect, it } from 'vitest';
import { expectError, seedItems } from '../helper.ts';
import { DARK_THEME as DARK, typedItems } from '../publication-fixtures.ts';
import { setupRecords } from './records.ts';

const v = (code: number, propertyName: string) => ({ name: 'ValidationError', code, propertyName });

describe('collection publication settings', () => {
  it('PATCH publication → shown on GET and in the list; {} clears; a new collection shows {}', async () => {
    const { call, create, bodies, tenant } = await setupRecords();
    const c = await create('/collection/collections', bodies.collection());
    expect(c.publication).toEqual({});
    const publication = {
      type: 'fullPage',
      language: 'NL',
      autoScroll: true,
      fullscreenLink: 'https://example.com/wall',
      fullscreenText: 'Volledig scherm',
      fullPage: { backgroundImage: 'https://images.example/stage.jpg', backgroundAttribution: 'Foto: Jan Jansen', logo: 'https://images.example/logo.svg' },
      theme: { ...DARK, accent: '#FBBF24' },
    };
    const res = await call('PATCH', `/collection/collections/${c._id}`, { publication });
    expect(res.statusCode, res.body).toBe(200);
    // stored in normal form: canonical language tag, colours in lower case
    const shown = { ...publication, language: 'nl', theme: DARK };
    expect(res.json().publication).toEqual(shown);
    expect((await call('GET', `/collection/collections/${c._id}`)).json().publication).toEqual(shown);
    const listed = (await call('GET', `/collection/collections?contract_id=${tenant.contract.id}`)).json();
    expect(listed.find((x: { _id: string }) => x._id === c._id).publication).toEqual(shown);
    // another field's update keeps it; sending it replaces the whole object
    expect((await call('PATCH', `/collection/collections/${c._id}`, { name: 'Renamed' })).json().publication).toEqual(shown);
    expect((await call('PATCH', `/collection/collections/${c._id}`, { publication: { language: 'pt-br' } })).json().publication).toEqual({ language: 'pt-BR' });
    expect((await call('PATCH', `/collection/collections/${c._id}`, { publication: {} })).json().publication).toEqual({});
    // create takes it too; the audit trail records the change
    const made = await create('/collection/collections', bodies.collection({ name: 'Stage', publication: { type: 'vertical', autoScroll: true } }));
    expect(made.publication).toEqual({ type: 'vertical', autoScroll: true });
  });

  it('refuses a theme failing WCAG 2.2 AA contrast, naming the pair', async () => {
    const { call, tenant } = await setupRecords();
    const patch = (theme: Record<string, unknown>) => call('PATCH', `/collection/collections/${tenant.collection.id}`, { publication: { theme } });
    // The case: a new background under the source badges (their default background) makes them unreadable.
    const grey = expectError(await patch({ background: '#9ca3af' }), 400, v(1003, 'publication.theme.background'), v(1003, 'publication.theme.background'), v(1003, 'publication.theme.background'));
    expect(grey.errors.map((e) => e.reason)).toEqual([
      'contrast 2.23:1 of badgeText on badgeBackground, below 4.5:1',
      'contrast 2.23:1 of muted on background, below 4.5:1',
      'contrast 2.47:1 of accent on background, below 3:1',
    ]);
    // pale badge text: named by the property sent, the message names both colours and the ratio
    const badge = expectError(await patch({ badgeText: '#9aa0a6', badgeBackground: '#ffffff' }), 400, v(1003, 'publication.theme.badgeText'));
    expect(badge.errors[0]).toMatchObject({ propertyValue: '#9aa0a6', reason: 'contrast 2.64:1 of badgeText on badgeBackground, below 4.5:1' });
    expect(badge.errors[0]!.message).toContain('badgeText #9aa0a6 on badgeBackground #ffffff has a contrast of 2.64:1');
    // just under 4.5:1 (#777 on white is 4.48) is refused; #767676 (4.54) is accepted
    expectError(await patch({ text: '#777777' }), 400, v(1003, 'publication.theme.text'));
    expect((await patch({ text: '#767676' })).statusCode).toBe(200);
    // a yellow accent: links on white cards, white text on it (avatars, buttons), the focus outline
    const yellow = expectError(await patch({ accent: '#facc15' }), 400, ...Array(3).fill(v(1003, 'publication.theme.accent')));
    expect(yellow.errors.map((e) => e.reason)).toEqual([
      'contrast 1.53:1 of accent on card, below 4.5:1',
      'contrast 1.53:1 of accentText on accent, below 4.5:1',
      'contrast 1.40:1 of accent on background, below 3:1',
    ]);
    // nothing was stored by the refusals
    const stored = (await call('GET', `/collection/collections/${tenant.collection.id}`)).json().publication;
    expect(stored).toEqual({ theme: { text: '#767676' } });
    // an accepted dark theme
    expect((await patch(DARK)).statusCode).toBe(200);
  });

  it('refuses non-https URLs, bad colours, languages and values, naming the property', async () => {
    const { call, tenant } = await setupRecords();
    const patch = (publication: unknown) => call('PATCH', `/collection/collections/${tenant.collection.id}`, { publication });
    expectError(await patch({ fullscreenLink: 'javascript:alert(1)' }), 400, v(1005, 'publication.fullscreenLink'));
    expectError(await patch({ fullscreenLink: 'http://example.com/' }), 400, v(1005, 'publication.fullscreenLink'));
    expectError(await patch({ fullPage: { backgroundImage: 'data:image/png;base64,AAAA' } }), 400, v(1005, 'publication.fullPage.backgroundImage'));
    expectError(await patch({ fullPage: { logo: 'https://user:pw@example.com/logo.png' } }), 400, v(1005, 'publication.fullPage.logo'));
    expectError(await patch({ fullPage: { logo: '/relative.png' } }), 400, v(1005, 'publication.fullPage.logo'));
    expectError(await patch({ theme: { card: 'red' } }), 400, v(1005, 'publication.theme.card'));
    expectError(await patch({ theme: { card: '#fff;} body{display:none' } }), 400, v(1005, 'publication.theme.card'));
    expectError(await patch({ theme: { font: 'Comic Sans"; x:y' } }), 400, v(1004, 'publication.theme.font'));
    expectError(await patch({ theme: { radius: 99 } }), 400, v(1003, 'publication.theme.radius'));
    expectError(await patch({ type: 'carousel' }), 400, v(1004, 'publication.type'));
    expectError(await patch({ language: 'not a language' }), 400, v(1005, 'publication.language'));
    expectError(await patch({ autoScroll: 'yes' }), 400, v(1002, 'publication.autoScroll'));
    expectError(await patch({ fullscreenText: '' }), 400, v(1003, 'publication.fullscreenText'));
    expectError(await patch(null), 400, v(1002, 'publication'));
    // several problems at once: one entry each
    expectError(await patch({ fullscreenLink: 'ftp://x.example/', theme: { text: '#eeeeee' } }), 400, v(1005, 'publication.fullscreenLink'), v(1003, 'publication.theme.text'), v(1003, 'publication.theme.text'));
    expect((await call('GET', `/collection/collections/${tenant.collection.id}`)).json().publication).toEqual({});
  });

  it("another contract's token cannot read or change them (403, no data)", async () => {
    const { call, tenant, other } = await setupRecords();
    const theirs = await call('PATCH', `/collection/collections/${tenant.collection.id}`, { publication: { language: 'de' } }, other.token);
    const body = expectError(theirs, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(body)).not.toContain(tenant.contract.id);
    expectError(await call('GET', `/collection/collections/${tenant.collection.id}`, undefined, other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect((await call('GET', `/collection/collections/${tenant.collection.id}`)).json().publication).toEqual({});
  });

  it('the wall applies them: layout, language, theme, fullscreen button and full page, every value escaped', async () => {
    const { call, tenant, db, app } = await setupRecords();
    await seedItems(db, tenant, typedItems());
    const wall = async (query = '') => (await app.inject({ method: 'GET', url: `/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}${query}` })).body;
    // no settings: the wall as before
    const plain = await wall();
    expect(plain).toContain('<html lang="en">');
    expect(plain).toContain('class="wall wall--grid"');
    expect(plain).not.toContain('data-theme');
    expect(plain).not.toContain('wall-bar');
    const evil = '</style><script>window.__pwned=1</script>"><img src=x onerror=alert(1)>';
    const publication = {
      type: 'fullPage',
      language: 'nl',
      autoScroll: true,
      fullscreenLink: 'https://example.com/wall?a=1&b="2"',
      fullscreenText: '</a><script>x()</script>',
      fullPage: { backgroundImage: 'https://images.example/stage.jpg', backgroundAttribution: evil, logo: 'https://images.example/logo.svg' },
      theme: DARK,
    };
    expect((await call('PATCH', `/collection/collections/${tenant.collection.id}`, { publication })).statusCode).toBe(200);
    const html = await wall();
    expect(html).toContain('<html lang="nl">');
    expect(html).toContain('class="wall wall--fullPage"');
    expect(html).toMatch(/<time datetime="[^"]+">2 min\. geleden<\/time>/);
    expect(html).toContain('>Openen<span class="sr-only">');
    expect(html).toContain('aria-label="Sluiten"');
    expect(html).toContain('>Origineel bekijken</a>');
    expect(html).toMatch(/<style nonce="[^"]+" data-theme>:root \{ --sluice-bg: #0f172a; --sluice-card: #1e293b; --sluice-text: #f1f5f9;[^<]*--sluice-radius: 4px; --sluice-font: Georgia[^<]*color-scheme: dark; \}<\/style>/);
    expect(html).toContain('<img class="page__backdrop" src="https://images.example/stage.jpg" alt=""');
    expect(html).toContain('<img class="page__logo" src="https://images.example/logo.svg" alt="Acme News"');
    expect(html).toContain('<h1 class="page__title">World News</h1>');
    expect(html).toContain('href="https://example.com/wall?a=1&amp;b=%222%22" target="_blank" rel="noopener noreferrer">&lt;/a&gt;&lt;script&gt;x()&lt;/script&gt;</a>');
    expect(html).toContain('<footer class="page__credit"><p>&lt;/style&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</p></footer>');
    expect(html).toContain('id="wall-autoscroll" hidden>Scrollen pauzeren</button>');
    expect(html).not.toContain('<script>window.__pwned');
    expect(html.match(/<script\b/g)).toHaveLength(1);
    // the request's layout still wins; the fragment speaks the wall's language
    expect(await wall('&layout=vertical')).toContain('class="wall wall--vertical"');
    const fragment = (await app.inject({ method: 'GET', url: `/v1/publication/${tenant.contract.slug}/items?q=${tenant.collection.slug}&ids=mastodon_hello` })).body;
    expect(fragment).toContain('>Openen<span class="sr-only">');
  });
});
