/**
 * Publication (`/console/contracts/<contract id>/publication[?customization=<id>]`): the
 * contract's customizations (`GET /publication/customizations?contract_id=`) edited in a code
 * editor (CodeMirror 6, `publication/editor.ts`, a lazy chunk of its own) beside a live
 * preview of the wall, the layout choice, the embed snippet to copy, and each customization's
 * history (`GET /publication/customizations/{id}/versions`) with a diff (`publication/diff.ts`)
 * and a restore (a PATCH with the old version's fields, which keeps a version in turn).
 *
 * Each customization says which walls it changes ("All walls of this contract" or its collection's
 * name) and its form chooses them ("Applies to", `publication/scope.ts`); the draft CSS goes only
 * to a preview of a wall it reaches.
 *
 * The preview is the wall itself (`GET {queue_url}/v1/publication/{contract}?q=&layout=&preview=true`)
 * in a sandboxed iframe (scripts only: an opaque origin, so a customization's JavaScript can never
 * reach the console and its token). The unsaved CSS goes to the wall's script by postMessage
 * (`{type: "sluice:preview-css", id, css}`) when the wall announces `sluice:preview-ready` and
 * on every change; the wall accepts it from the console's origin only and applies it as a
 * `<style>` with its own nonce, so both CSPs stay strict (docs/api.md#publication). A
 * JavaScript draft is not run in the preview (no code by message): saving reloads the preview.
 *
 * Below the preview, the previewed collection's publication settings (`publication/settings.ts`,
 * docs/api.md#publication-settings): its unsaved theme goes to the preview the same way, as the
 * preview CSS `THEME_PREVIEW_ID`; saving reloads the preview.
 */
import type { ComponentChildren } from 'preact';
import { useLocation, useRoute } from 'preact-iso/router';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { config } from '../config.ts';
import { useDraft } from '../drafts.ts';
import { ErrorBanner, errorsFor, Field, useForm } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';
import { lineDiff } from './publication/diff.ts';
import type { Editor } from './publication/editor.ts';
import { AppliesTo, reaches, wallsOf } from './publication/scope.ts';
import { SettingsForm, THEME_PREVIEW_ID } from './publication/settings.ts';
import type { Collection, Customization, CustomizationVersion } from '../resources.ts';

/** The wall's layouts (src/publication/render.ts). */
const LAYOUTS: [string, string][] = [
  ['grid', 'grid'],
  ['vertical', 'vertical'],
  ['horizontal', 'horizontal'],
];
const TYPES: [string, string][] = [
  ['css', 'css (style)'],
  ['js', 'js (script)'],
];

const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * A CodeMirror editor (in a shadow root, see `publication/editor.ts`) whose text follows `value`
 * (a restore) and reports edits to `onChange`; `description` is its hint and errors.
 */
function CodeEditor({ type, label, value, onChange, description }: { type: 'css' | 'js'; label: string; value: string; onChange: (text: string) => void; description: string }) {
  const parent = useRef<HTMLDivElement>(null);
  const editor = useRef<Editor | undefined>(undefined);
  const changed = useRef(onChange);
  changed.current = onChange;
  const latest = useRef({ value, description });
  latest.current = { value, description };
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let live = true;
    // The editor (CodeMirror) is a chunk of its own, fetched when a customization is shown.
    import('./publication/editor.ts')
      .then(({ createEditor }) => createEditor(parent.current!, { doc: latest.current.value, type, label, description: latest.current.description, onChange: (text) => changed.current(text) }))
      .then(
        (created) => {
          if (!live) return created.destroy();
          editor.current = created;
          created.set(latest.current.value);
        },
        (caught) => live && setError(caught),
      );
    return () => {
      live = false;
      editor.current?.destroy();
      editor.current = undefined;
    };
  }, [type, label]);
  useEffect(() => editor.current?.set(value), [value]);
  useEffect(() => editor.current?.describe(description), [description]);
  return html`<${ErrorBanner} error=${error}><p>The code editor could not be loaded; check the network and reload the page (your unsaved input is kept).</p><//>
    <div class="publication__code" ref=${parent}></div>`;
}

/** The selected customization: name, active, data in the editor; Save and Discard. */
function CustomizationForm({ customization, collections, onSaved, onDraft }: { customization: Customization; collections: Collection[]; onSaved: (saved: Customization) => void; onDraft: (data: string) => void }) {
  const c = customization;
  const form = useForm(`customization:${c._id}:${c.version}`, { name: c.name, data: c.data, active: c.active, collectionId: c.collectionId ?? '' });
  const dataErrors = errorsFor(form.error, 'data');
  const hintText = `${c.type === 'css' ? 'The preview shows your change as you type, before you save.' : 'JavaScript runs in the preview once saved.'} Tab leaves the editor.`;
  useEffect(() => onDraft(form.values.data), [form.values.data]);
  const unsaved = form.values.data !== c.data || form.values.name !== c.name || form.values.active !== c.active || form.values.collectionId !== (c.collectionId ?? '');
  return html`<form class="card publication__form" aria-labelledby="edit-title" onSubmit=${form.submit(async (values) => onSaved(await api.patch<Customization>(`/publication/customizations/${c._id}`, { ...values, collectionId: values.collectionId || null })))}>
    <h2 id="edit-title">${c.name} <span class="muted">· ${c.type} · version ${c.version}</span></h2>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
      <div class="field publication__active">
        <label><input type="checkbox" name="active" checked=${form.values.active} onChange=${(event: Event) => form.set('active')((event.currentTarget as HTMLInputElement).checked)} /> active</label>
      </div>
    </div>
    <${AppliesTo} value=${form.values.collectionId} onInput=${form.set('collectionId')} collections=${collections} error=${form.error} />
    <div class="field">
      <span class="publication__label" aria-hidden="true">data (${c.type === 'css' ? 'CSS' : 'JavaScript'})</span>
      <p class="hint" aria-hidden="true">${hintText}</p>
      <${CodeEditor} type=${c.type} label=${`data of ${c.name}`} value=${form.values.data} onChange=${form.set('data')} description=${[hintText, ...dataErrors.map((e) => e.message)].join(' ')} />
      ${dataErrors.length ? html`<p class="field__error" role="alert">${dataErrors.map((e) => e.message).join(' ')}</p>` : null}
    </div>
    <div class="buttons">
      <button type="submit" disabled=${form.busy}>Save ${c.name}</button>
      <button type="button" class="secondary" disabled=${!unsaved} onClick=${() => form.reset()}>Discard changes</button>
      <span class="muted" role="status">${unsaved ? 'Unsaved changes' : ''}</span>
    </div>
  </form>`;
}

/** A draft the preview applies: CSS under `id` (a customization's, or the theme's). */
type PreviewDraft = { id: string; type: string; data: string };

/** The wall in a sandboxed frame, with the drafts' CSS applied (the selected customization's, the theme's). */
function Preview({ src, drafts }: { src: string; drafts: (PreviewDraft | undefined)[] }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const latest = useRef(drafts);
  latest.current = drafts;
  const post = useCallback(() => {
    // The frame is sandboxed without allow-same-origin (an opaque origin): '*' is the only
    // target; what goes out is CSS the editor is about to publish anyway.
    for (const d of latest.current) if (d && d.type === 'css') frame.current?.contentWindow?.postMessage({ type: 'sluice:preview-css', id: d.id, css: d.data }, '*');
  }, []);
  useEffect(() => {
    const listen = (event: MessageEvent) => {
      if (event.source === frame.current?.contentWindow && (event.data as { type?: string } | null)?.type === 'sluice:preview-ready') post();
    };
    window.addEventListener('message', listen);
    return () => window.removeEventListener('message', listen);
  }, [post]);
  useEffect(post, [drafts.map((d) => `${d?.id}\n${d?.data}`).join('\n')]);
  return html`<iframe ref=${frame} class="publication__frame" src=${src} title="Preview of the wall" aria-label="Preview of the wall" sandbox="allow-scripts allow-popups allow-popups-to-escape-sandbox" referrerpolicy="strict-origin-when-cross-origin"></iframe>`;
}

/** The embed snippet for other sites (`/v1/embed.js`) and a Copy button with a status message. */
function Embed({ contract, collection, layout }: { contract: string; collection: string; layout: string }) {
  const [status, setStatus] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  const attribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const snippet = `<div data-sluice-contract="${attribute(contract)}" data-sluice-q="${attribute(collection)}" data-sluice-layout="${attribute(layout)}"></div>\n<script src="${attribute(config.queueUrl)}/v1/embed.js" async></script>`;
  useEffect(() => setStatus(''), [snippet]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(snippet);
      setStatus('Embed snippet copied.');
    } catch {
      area.current?.select();
      setStatus('The browser did not allow copying: the snippet is selected, copy it with Ctrl+C (⌘C).');
    }
  };
  return html`<section class="card" aria-labelledby="embed-title">
    <h2 id="embed-title">Embed</h2>
    <div class="field">
      <label for=${id}>Embed snippet</label>
      <p class="hint">Paste it into a page of your site: the wall appears there in a frame, with your customizations.</p>
      <textarea id=${id} ref=${area} class="publication__snippet" readonly rows="3" value=${snippet}></textarea>
    </div>
    <div class="buttons">
      <button type="button" onClick=${copy}>Copy embed snippet</button>
      <p class="publication__status" role="status">${status}</p>
    </div>
  </section>`;
}

function DiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = lineDiff(before, after);
  const sign = { added: '+', removed: '−', same: ' ', skipped: '…' } as const;
  const word = { added: 'added: ', removed: 'removed: ', same: '', skipped: '' } as const;
  return html`<div class="publication__diff" role="group" aria-label=${label}>
    ${lines.length === 1 && lines[0]!.kind === 'skipped' ? html`<p class="muted">No change to data.</p>` : null}
    <ol>
      ${lines.map((line) => html`<li class=${`diff diff--${line.kind}`}><span aria-hidden="true" class="diff__sign">${sign[line.kind]}</span><span class="visually-hidden">${word[line.kind]}</span><code>${line.text}</code></li>`)}
    </ol>
  </div>`;
}

/** The versions of the selected customization, newest first, each with its diff and Restore. */
function History({ customization, onRestored }: { customization: Customization; onRestored: (saved: Customization) => void }) {
  const [versions, setVersions] = useState<CustomizationVersion[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const c = customization;
  useEffect(() => {
    let live = true;
    setVersions(undefined);
    setError(undefined);
    api.get<CustomizationVersion[]>(`/publication/customizations/${c._id}/versions`, { count: 20 }).then(
      (list) => live && setVersions(list),
      (caught) => live && setError(caught),
    );
    return () => {
      live = false;
    };
  }, [c._id, c.version]);
  const restore = async (v: CustomizationVersion) => {
    setBusy(true);
    setError(undefined);
    try {
      const saved = await api.patch<Customization>(`/publication/customizations/${c._id}`, { data: v.data, name: v.name, active: v.active, ...(v.description !== undefined ? { description: v.description } : {}) });
      setStatus(`Version ${v.version} restored as version ${saved.version}.`);
      onRestored(saved);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="card" aria-labelledby="history-title">
    <h2 id="history-title">History of ${c.name}</h2>
    <p class="publication__status" role="status">${status}</p>
    <${ErrorBanner} error=${error} />
    ${versions === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${versions && !versions.length ? html`<p class="muted">No earlier versions yet: every save keeps the version it replaces.</p>` : null}
    ${versions?.length
      ? html`<ol class="publication__versions">
          ${versions.map((v) => {
            const shown = open === v._id;
            const diffId = `diff-${v._id}`;
            return html`<li key=${v._id} class="publication__version">
              <h3>version ${v.version}${v.name !== c.name ? html` <span class="muted">(${v.name})</span>` : null}${v.active ? null : html` <span class="muted">· inactive</span>`}</h3>
              <p class="muted">saved ${when(v.lastModified)} by ${v.lastModifiedBy} · replaced ${when(v.replaced)} by ${v.replacedBy}</p>
              <div class="buttons">
                <button type="button" class="secondary" aria-expanded=${shown ? 'true' : 'false'} aria-controls=${diffId} onClick=${() => setOpen(shown ? undefined : v._id)}>
                  ${shown ? 'Hide' : 'Show'} changes<span class="visually-hidden"> from version ${v.version} to version ${c.version}</span>
                </button>
                <button type="button" disabled=${busy} onClick=${() => restore(v)}>Restore version ${v.version}</button>
              </div>
              <div id=${diffId}>${shown ? html`<${DiffView} before=${v.data} after=${c.data} label=${`Changes from version ${v.version} to version ${c.version}`} />` : null}</div>
            </li>`;
          })}
        </ol>`
      : null}
  </section>`;
}

function NewCustomization({ contractId, collections, onCreated }: { contractId: string; collections: Collection[]; onCreated: (created: Customization) => void }) {
  const form = useForm('new-customization', { name: '', type: 'css', collectionId: '' });
  const create = async ({ collectionId, ...values }: { name: string; type: string; collectionId: string }) =>
    onCreated(await api.post<Customization>('/publication/customizations', { ...values, contractId, data: '', ...(collectionId ? { collectionId } : {}) }));
  return html`<form class="card" aria-labelledby="new-title" onSubmit=${form.submit(create)}>
    <h2 id="new-title">New customization</h2>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
      <${Field} label="type" name="type" value=${form.values.type} onInput=${form.set('type')} options=${TYPES} error=${form.error} />
    </div>
    <${AppliesTo} value=${form.values.collectionId} onInput=${form.set('collectionId')} collections=${collections} error=${form.error} />
    <button type="submit" disabled=${form.busy}>Create customization</button>
  </form>`;
}

function Loading({ error, children }: { error: unknown; children?: ComponentChildren }) {
  return error ? html`<${ErrorBanner} error=${error} />` : html`<p class="muted">${children ?? 'Loading…'}</p>`;
}

/** The screen of the module's description, for the contract of the address. */
export default function Publication() {
  const contractId = useContractId()!;
  const { query } = useRoute();
  const { route } = useLocation();
  const { contracts } = useSession();
  const contract = contracts?.find((c) => c._id === contractId);
  const [customizations, setCustomizations] = useState<Customization[] | undefined>(undefined);
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [draft, setDraft] = useState<PreviewDraft | undefined>(undefined);
  const [themeDraft, setThemeDraft] = useState<PreviewDraft | undefined>(undefined);
  const [reloads, setReloads] = useState(0);
  const [view, setView] = useDraft('preview', { layout: 'grid', collection: '' });

  useEffect(() => {
    let live = true;
    setCustomizations(undefined);
    setCollections(undefined);
    setError(undefined);
    Promise.all([api.get<Customization[]>('/publication/customizations', { contract_id: contractId }), api.get<Collection[]>('/collection/collections', { contract_id: contractId })]).then(
      ([list, cols]) => {
        if (!live) return;
        setCustomizations(list);
        setCollections(cols);
      },
      (caught) => live && setError(caught),
    );
    return () => {
      live = false;
    };
  }, [contractId]);

  const selectedId = query.customization ?? customizations?.[0]?._id;
  const selected = customizations?.find((c) => c._id === selectedId);
  const here = (id: string) => `${screenPath(contractId, 'publication')}?customization=${encodeURIComponent(id)}`;
  const replace = (saved: Customization) => {
    setCustomizations((list) => list?.map((c) => (c._id === saved._id ? saved : c)));
    setReloads((n) => n + 1);
  };

  const collection = collections?.find((c) => c._id === view.collection) ?? collections?.[0];
  const src =
    contract && collection
      ? `${config.queueUrl}/v1/publication/${encodeURIComponent(contract.slug)}?${new URLSearchParams({ q: collection.slug, layout: view.layout, preview: 'true' })}`
      : undefined;

  return html`<${Screen} title="Publication">
    ${error || !customizations || !collections
      ? html`<${Loading} error=${error} />`
      : html`<div class="publication">
          <section class="card publication__list" aria-labelledby="customizations-title">
            <h2 id="customizations-title">Customizations</h2>
            ${customizations.length
              ? html`<ul>
                  ${customizations.map(
                    (c) => html`<li><a href=${here(c._id)} aria-current=${c._id === selected?._id ? 'true' : undefined}>${c.name}</a> <span class="muted">${c.type} · version ${c.version}${c.active ? '' : ' · inactive'} · ${wallsOf(c, collections)}</span></li>`,
                  )}
                </ul>`
              : html`<p class="muted">No customizations yet: create one below.</p>`}
          </section>
          <div class="publication__work">
            <div class="publication__edit">
              ${selected
                ? html`<${CustomizationForm} key=${`${selected._id}:${selected.version}`} customization=${selected} collections=${collections} onSaved=${replace} onDraft=${(data: string) => setDraft({ id: selected._id, type: selected.type, data })} />`
                : null}
            </div>
            <section class="card publication__preview" aria-labelledby="preview-title">
              <h2 id="preview-title">Preview</h2>
              <div class="row">
                <${Field} label="collection" name="collection" value=${collection?._id ?? ''} onInput=${(value: string) => setView({ ...view, collection: value })} options=${collections.map((c) => [c._id, c.name] as [string, string])} />
                <${Field} label="layout" name="layout" value=${view.layout} onInput=${(value: string) => setView({ ...view, layout: value })} options=${LAYOUTS} />
              </div>
              ${src ? html`<${Preview} key=${`${src}#${selected?._id ?? ''}#${reloads}`} src=${src} drafts=${[draft?.id === selected?._id && selected && reaches(selected, collection?._id) ? draft : undefined, themeDraft]} />` : html`<p class="muted">No collection yet: create one on Contracts & collections to preview the wall.</p>`}
            </section>
          </div>
          ${collection
            ? html`<${SettingsForm}
                key=${`${collection._id}:${JSON.stringify(collection.publication ?? {})}`}
                collection=${collection}
                onThemeCss=${(css: string) => setThemeDraft({ id: THEME_PREVIEW_ID, type: 'css', data: css })}
                onSaved=${(saved: Collection) => {
                  setCollections((list) => list?.map((c) => (c._id === saved._id ? saved : c)));
                  setReloads((n) => n + 1);
                }}
              />`
            : null}
          ${selected ? html`<${History} customization=${selected} onRestored=${replace} />` : null}
          ${contract && collection ? html`<${Embed} contract=${contract.slug} collection=${collection.slug} layout=${view.layout} />` : null}
          <${NewCustomization} contractId=${contractId} collections=${collections} onCreated=${(created: Customization) => {
            setCustomizations((list) => [...(list ?? []), created]);
            route(here(created._id));
          }} />
        </div>`}
  <//>`;
}
