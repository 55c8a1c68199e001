/**
 * Sources (`/console/contracts/<contract id>/sources?collection=<collection id>`): a collection's
 * inputs as a table with their health, kept current, and the forms that change them. All through
 * the management API (`docs/api.md#inputs`):
 *
 * - the collection chooser: `GET /collection/collections?contract_id=` (when the address names
 *   none or one that is gone: the one shown last, else the first; chosen-collection.ts);
 *   `?add=source` opens the add form at once (the lead of an empty contract, contracts.ts);
 * - the table: `GET /collection/inputs?contract_id=&collection_id=`, polled every
 *   `POLL_MS` while the page is visible (and at once when it becomes visible again); rows keep
 *   their elements (keyed by `_id`), so a poll neither flickers nor moves the focus;
 * - the add and edit form: services, types and the fields each type needs from
 *   `GET /collection/services` (`docs/api.md#services`), never a list of our own, starting on the
 *   first service that needs no setup (no credential: rss); the poll interval (`interval`,
 *   seconds); `POST` and `PUT /collection/inputs[/{id}]`, each API error shown at its field
 *   (`propertyName`); a source the collection already has (409 naming `input`,
 *   docs/api.md#duplicates-of-a-source) said in words, with **Add anyway** (`force=true`);
 * - a new active input is checked at once (`POST /collection/inputs/{id}/poll`,
 *   docs/api.md#poll-now) and the form shows the answer: the feed's title and its new items, or
 *   the source's error in plain words; every row has **Poll now** too;
 * - each row shows the source's own `title` (a feed's title) above its `input`;
 * - the credential an input uses: the form offers the contract's credentials of the input's
 *   service (`GET /collection/credentials?contract_id=`, docs/api.md#credentials) as
 *   `credentialId`, "contract default" leaving it out; each row says which one it uses;
 * - activate, deactivate: `PUT` with the input's own fields and `active` changed (a PUT replaces,
 *   so `filterId` and the location fields are sent back as they are); delete: `DELETE`, after a
 *   confirmation in a modal `<dialog>`;
 * - many feeds at once: pasted URLs (one a line) or the `xmlUrl` of every outline of an OPML file
 *   (http://opml.org/spec2.opml, parsed here with DOMParser), sent as one bulk `POST` (all or
 *   nothing); the API's `[i].…` errors are shown at their line;
 * - the table has explicit ARIA roles: its narrow layout (cards, `sources.css`) sets
 *   `display: block`, which would otherwise drop the table's semantics in some browsers; each cell
 *   repeats its column's name there in an `aria-hidden` label (generated content would join the
 *   cell's accessible name);
 * - per input, its rejected items with the set and rule that rejected each
 *   (`GET /collection/inputs/{id}/rejections`).
 */
import { useRoute } from 'preact-iso/router';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, type ErrorEntry } from '../api.ts';
import { useChosenCollection } from '../chosen-collection.ts';
import { hasDraft } from '../drafts.ts';
import { ErrorBanner, errorsFor, Field, SubmitOrCancel, useForm } from '../forms.ts';
import { html } from '../html.ts';
import { screenPath } from '../paths.ts';
import { may, useRole } from '../roles.ts';
import { Screen } from '../screen.ts';
import { useContractId } from '../session.ts';
import type { Collection, Credential, Input, PollResult, ServiceEntry } from '../resources.ts';
import { RejectionList } from './rejections.ts';
import { absolute, ago, feedLines, feedModeText, plainError, pollResultText } from './sources-text.ts';

/** How often the table is read again while the page is visible, in milliseconds. */
const POLL_MS = 5000;


// ---------------------------------------------------------------------------------------------
// Times

function When({ iso, now }: { iso: string; now: number }) {
  return html`<time datetime=${iso} title=${absolute.format(new Date(iso))}>${ago(iso, now)}</time>`;
}

/**
 * The feed URLs of an OPML document (OPML 2.0: `outline` elements whose `type` is `rss` carry
 * `xmlUrl`; older files vary the case): every `xmlUrl`, in document order. Throws an Error
 * saying what is wrong when the text is not XML or names no feed.
 */
export function opmlFeeds(text: string): string[] {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length || doc.documentElement.nodeName.toLowerCase() !== 'opml') {
    throw new Error('This file is not an OPML document.');
  }
  const urls = [...doc.getElementsByTagName('outline')]
    .map((outline) => outline.getAttribute('xmlUrl') ?? outline.getAttribute('xmlurl') ?? outline.getAttribute('XMLURL'))
    .filter((url): url is string => Boolean(url?.trim()))
    .map((url) => url.trim());
  if (!urls.length) throw new Error('This OPML file lists no feed (no outline with an xmlUrl).');
  return urls;
}

// ---------------------------------------------------------------------------------------------
// Bodies

/** The PUT body that keeps `input` as it is, with `changes` applied (a PUT replaces every field). */
function bodyOf(input: Input, changes: Partial<Input> = {}): Record<string, unknown> {
  const next = { ...input, ...changes };
  return {
    service: next.service,
    type: next.type,
    input: next.input,
    collectionId: next.collectionId,
    display: next.display,
    active: next.active,
    ...(next.filterId ? { filterId: next.filterId } : {}),
    ...(next.credentialId ? { credentialId: next.credentialId } : {}),
    ...(next.latitude !== undefined ? { latitude: next.latitude } : {}),
    ...(next.longitude !== undefined ? { longitude: next.longitude } : {}),
    ...(next.radius !== undefined ? { radius: next.radius } : {}),
    ...(next.interval !== undefined ? { interval: next.interval } : {}),
  };
}

interface InputValues extends Record<string, unknown> {
  service: string;
  type: string;
  input: string;
  latitude: string;
  longitude: string;
  radius: string;
  display: boolean;
  active: boolean;
  credentialId: string;
  interval: string;
}

const FIELD_NAMES = ['service', 'type', 'input', 'latitude', 'longitude', 'radius', 'display', 'active', 'credentialId', 'interval'];
const LOCATION = [
  ['latitude', 'Latitude', 'Degrees, −90 to 90'],
  ['longitude', 'Longitude', 'Degrees, −180 to 180'],
  ['radius', 'Radius', 'Meters, more than 0, at most 50 000'],
] as const;

/**
 * The form's values → the body fields they set (numbers for the location fields the type needs;
 * `credentialId` undefined for the contract's default, so that JSON leaves it out).
 */
function sourceOf(values: InputValues, fields: string[]): Record<string, unknown> {
  const interval = values.interval.trim();
  const body: Record<string, unknown> = {
    service: values.service, type: values.type, input: values.input.trim(), display: values.display, active: values.active, credentialId: values.credentialId || undefined,
    interval: interval === '' ? undefined : Number(interval),
  };
  for (const [name] of LOCATION) {
    const text = values[name].trim();
    if (fields.includes(name) && text !== '') body[name] = Number(text);
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Parts

function Check({ label, checked, onChange, hint }: { label: string; checked: boolean; onChange: (value: boolean) => void; hint?: string }) {
  return html`<label class="sources__check">
    <input type="checkbox" checked=${checked} onChange=${(event: Event) => onChange((event.currentTarget as HTMLInputElement).checked)} />
    <span>${label}${hint ? html` <span class="muted">${hint}</span>` : null}</span>
  </label>`;
}

/** The service a new input starts on: the first that runs without setup (needs no credential: rss), else the first. */
function firstService(services: ServiceEntry[]): ServiceEntry | undefined {
  return services.find((entry) => entry.configured && entry.credentials.length === 0) ?? services[0];
}

/** What the add form shows once a new input is saved: its check under way, then the answer (or why there is none). */
type Checking = { input: Input; answer?: PollResult; error?: unknown; skipped?: boolean };

/**
 * The add or edit form of one input. `input` absent: a new input of `collectionId`; once saved it
 * is handed to `onAdded` and, when active, checked at once (poll now), the form showing the answer.
 */
function InputForm(props: { services: ServiceEntry[]; credentials: Credential[]; contractId: string; collectionId: string; input?: Input; onDone: (saved?: Input) => void; onAdded?: (added: Input) => void }) {
  const { services, input } = props;
  const first = firstService(services);
  const initial = useMemo<InputValues>(
    () => ({
      service: input?.service ?? first?.service ?? '',
      type: input?.type ?? first?.types[0]?.type ?? '',
      input: input?.input ?? '',
      latitude: input?.latitude?.toString() ?? '',
      longitude: input?.longitude?.toString() ?? '',
      radius: input?.radius?.toString() ?? '',
      display: input?.display ?? true,
      active: input?.active ?? true,
      credentialId: input?.credentialId ?? '',
      interval: input?.interval?.toString() ?? '',
    }),
    [input?._id],
  );
  const form = useForm<InputValues>(input ? `edit:${input._id}` : 'add-input', initial, FIELD_NAMES);
  const service = services.find((entry) => entry.service === form.values.service);
  // A type the chosen service lacks (the service was just changed) stands for its first type.
  const type = service?.types.find((entry) => entry.type === form.values.type) ?? service?.types[0];
  const fields = type?.fields ?? ['input'];
  // The contract's credentials of the chosen service; one of another service (the service was
  // just changed) stands for the default.
  const ofService = props.credentials.filter((credential) => credential.service === service?.service);
  const credentialId = ofService.some((credential) => credential._id === form.values.credentialId) ? form.values.credentialId : '';
  const title = input ? `Edit ${input.input}` : 'New source';
  const titleId = input ? `edit-title-${input._id}` : 'add-title';

  // "Add anyway" sends the same body again with force=true (docs/api.md#duplicates-of-a-source).
  const force = useRef(false);
  const [check, setCheck] = useState<Checking | undefined>(undefined);
  const save = form.submit(async (values) => {
    const source = sourceOf({ ...values, type: type?.type ?? values.type, credentialId }, fields);
    const query = force.current ? { force: true } : undefined;
    force.current = false;
    if (input) {
      props.onDone(await api.put<Input>(`/collection/inputs/${input._id}`, { ...bodyOf(input), ...source, ...Object.fromEntries(LOCATION.filter(([name]) => !fields.includes(name)).map(([name]) => [name, undefined])) }, query));
      return;
    }
    const added = await api.post<Input>('/collection/inputs', { ...source, contractId: props.contractId, collectionId: props.collectionId }, query);
    props.onAdded?.(added);
    // An inactive input is not collected: it is not checked either.
    if (!added.active) return setCheck({ input: added, skipped: true });
    setCheck({ input: added });
    try {
      const answer = await api.post<PollResult>(`/collection/inputs/${added._id}/poll`);
      props.onAdded?.(answer.input);
      setCheck({ input: answer.input, answer });
    } catch (error) {
      setCheck({ input: added, error });
    }
  });
  const duplicate = form.error instanceof ApiError && form.error.status === 409 && form.error.errors.some((entry) => entry.propertyName === 'input');

  if (check) {
    const name = check.input.title ?? check.input.input;
    return html`<section class="card sources__form" aria-labelledby=${titleId}>
      <h2 id=${titleId}>${title}</h2>
      <p>Added <strong>${name}</strong>.</p>
      <p role="status" class=${check.answer?.status === 'error' ? 'sources__check-error' : ''}>
        ${check.skipped ? 'It is inactive: Sluice collects nothing from it until it is activated.' : check.answer ? pollResultText(check.answer) : check.error ? '' : 'Checking the source now…'}
      </p>
      <${ErrorBanner} error=${check.error} />
      <div class="buttons">
        <button type="button" onClick=${() => setCheck(undefined)}>Add another</button>
        <button type="button" class="secondary" onClick=${() => props.onDone()}>Close</button>
      </div>
    </section>`;
  }

  return html`<form class="card sources__form" aria-labelledby=${titleId} onSubmit=${save}>
    <h2 id=${titleId}>${title}</h2>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field}
        label="Service"
        name="service"
        autoFocus
        value=${form.values.service}
        options=${services.map((entry) => [entry.service, entry.configured ? entry.service : `${entry.service} (credentials not set)`] as [string, string])}
        onInput=${(value: string) => form.set('service')(value)}
        error=${form.error}
      />
      <${Field}
        label="Type"
        name="type"
        value=${type?.type ?? ''}
        options=${(service?.types ?? []).map((entry) => [entry.type, entry.type] as [string, string])}
        onInput=${form.set('type')}
        error=${form.error}
      />
    </div>
    ${service && (service.credentialFields.length || ofService.length)
      ? html`<${Field}
          label="Credential"
          name="credentialId"
          value=${credentialId}
          options=${[['', 'contract default'], ...ofService.map((c) => [c._id, `${c.name}${c.default ? ' (default)' : ''}${c.active ? '' : ' (inactive)'}${c.health.status === 'failed' ? ' (failed)' : ''}`])] as [string, string][]}
          onInput=${form.set('credentialId')}
          error=${form.error}
          hint=${ofService.length ? `The contract default is its default ${service.service} credential, else the installation's own.` : `This contract has no ${service.service} credential: add one on Connections.`}
        />`
      : null}
    ${service && !service.configured && !ofService.length
      ? html`<p class="banner banner--warn">${service.service} needs ${service.credentials.filter((c) => !c.configured).map((c) => c.variable).join(' and ')} set on the server; until then its inputs may collect nothing.</p>`
      : null}
    <${Field} label="Input" name="input" required value=${form.values.input} onInput=${form.set('input')} error=${duplicate ? undefined : form.error}
      hint=${form.values.service === 'rss' ? 'The address of the feed (RSS, Atom or JSON Feed).' : 'What to collect: a user, tag, page, words… as the service names it.'} />
    ${duplicate
      ? html`<div class="banner banner--warn" role="alert">
          <p>This collection already has this source. Adding it again collects the same items twice.</p>
          <button type="button" class="secondary" onClick=${() => {
            force.current = true;
            void save();
          }}>${input ? 'Save anyway' : 'Add anyway'}</button>
        </div>`
      : null}
    ${fields.some((name) => name !== 'input')
      ? html`<div class="row">
          ${LOCATION.filter(([name]) => fields.includes(name)).map(
            ([name, label, hint]) => html`<${Field} label=${label} name=${name} type="number" value=${form.values[name]} onInput=${form.set(name)} error=${form.error} hint=${hint} />`,
          )}
        </div>`
      : null}
    <${Field} label="Poll interval" name="interval" type="number" value=${form.values.interval} onInput=${form.set('interval')} error=${form.error}
      hint="Seconds between two polls. Empty: the service's own interval." />
    <div class="sources__checks">
      <${Check} label="active" hint="(collected)" checked=${form.values.active} onChange=${form.set('active')} />
      <${Check} label="display" hint="(its items are published at once)" checked=${form.values.display} onChange=${form.set('display')} />
    </div>
    ${['display', 'active'].map((name) => (errorsFor(form.error, name).length ? html`<p class="field__error">${errorsFor(form.error, name).map((e) => e.message).join(' ')}</p>` : null))}
    <${SubmitOrCancel} form=${form} label=${input ? 'Save' : 'Save source'} onCancel=${() => props.onDone()} />
  </form>`;
}

/** Many feeds at once: pasted URLs or an OPML file, one bulk create. */
function BulkForm(props: { contractId: string; collectionId: string; onDone: (created?: Input[]) => void }) {
  const form = useForm('bulk-feeds', { urls: '', display: true }, ['urls']);
  const [fileError, setFileError] = useState<string | undefined>(undefined);
  const lines = feedLines(form.values.urls);
  // The API names an entry `[i].input`; say which line it is.
  const entries: { line: string; errors: ErrorEntry[] }[] =
    form.error instanceof ApiError
      ? lines
          .map((line, i) => ({ line, errors: (form.error as ApiError).errors.filter((entry) => entry.propertyName?.startsWith(`[${i}].`)) }))
          .filter((entry) => entry.errors.length)
      : [];
  // The rest (neither a line nor the URL field): a banner.
  const rest = form.error instanceof ApiError ? form.error.errors.filter((entry) => !/^\[\d+\]\./.test(entry.propertyName ?? '') && entry.propertyName !== 'urls') : [];
  const banner = form.error instanceof ApiError ? (rest.length ? new ApiError(form.error.status, rest, form.error.requestId) : undefined) : form.error;

  const readFile = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    setFileError(undefined);
    if (!file) return;
    try {
      const urls = opmlFeeds(await file.text());
      form.set('urls')([...lines, ...urls].join('\n'));
    } catch (error) {
      setFileError(error instanceof Error ? error.message : String(error));
    }
  };

  const save = form.submit(async (values) => {
    const urls = feedLines(values.urls);
    if (!urls.length) throw new ApiError(400, [{ name: 'ValidationError', message: 'Paste at least one feed URL, or choose an OPML file.', propertyName: 'urls' }]);
    const created = await api.post<Input[]>(
      '/collection/inputs',
      urls.map((url) => ({ service: 'rss', type: 'feed', input: url, display: values.display, contractId: props.contractId, collectionId: props.collectionId })),
    );
    props.onDone(created);
  });

  return html`<form class="card sources__form" aria-labelledby="bulk-title" onSubmit=${save}>
    <h2 id="bulk-title">Add many feeds</h2>
    <${ErrorBanner} error=${banner} />
    <${Field} label="Feed URLs" name="urls" multiline autoFocus hint="One feed address a line. All are added, or none when one is refused." value=${form.values.urls} onInput=${form.set('urls')} error=${form.error} />
    <div class="field">
      <label for="opml-file">OPML file</label>
      <p class="hint" id="opml-hint">Its feeds are added to the list above.</p>
      <input id="opml-file" type="file" accept=".opml,.xml,text/xml,application/xml,text/x-opml" aria-describedby=${fileError ? 'opml-hint opml-error' : 'opml-hint'} aria-invalid=${fileError ? 'true' : undefined} onChange=${readFile} />
      ${fileError ? html`<p class="field__error" id="opml-error">${fileError}</p>` : null}
    </div>
    <${Check} label="display" hint="(their items are published at once)" checked=${form.values.display} onChange=${form.set('display')} />
    ${entries.length
      ? html`<div class="banner banner--error" role="alert">
          <p>Nothing was added. Correct these lines:</p>
          <ul class="sources__bulk-errors">
            ${entries.map(({ line, errors }) => html`<li><code>${line}</code>: ${errors.map((entry) => entry.message).join(' ')}</li>`)}
          </ul>
        </div>`
      : null}
    <${SubmitOrCancel} form=${form} label=${`Add ${lines.length || ''} feed${lines.length === 1 ? '' : 's'}`} onCancel=${() => props.onDone()} />
  </form>`;
}

/** Which credential `input` uses: the one it names, else the contract's default (services that take one, `credentialFields`). */
function credentialOf(input: Input, services: ServiceEntry[], credentials: Credential[]): string | undefined {
  const service = services.find((entry) => entry.service === input.service);
  if (!input.credentialId && !(service && service.credentialFields.length)) return undefined;
  if (input.credentialId) return credentials.find((c) => c._id === input.credentialId)?.name ?? input.credentialId;
  const fallback = credentials.find((c) => c.service === input.service && c.default);
  return fallback ? `contract default (${fallback.name})` : 'contract default';
}

function Health({ input, now, credential }: { input: Input; now: number; credential?: string }) {
  const { status } = input;
  return html`<dl class="sources__health">
    ${credential ? html`<div><dt>Credential</dt><dd>${credential}</dd></div>` : null}
    ${!status.lastRun ? html`<div><dt>Last poll</dt><dd>not yet</dd></div>` : null}
    ${status.lastSuccess ? html`<div><dt>Last success</dt><dd><${When} iso=${status.lastSuccess} now=${now} /></dd></div>` : status.lastRun ? html`<div><dt>Last success</dt><dd>never</dd></div>` : null}
    ${status.lastError ? html`<div class="sources__error"><dt>Last error</dt><dd>${plainError(status.lastError)}</dd></div>` : null}
    <div><dt>Collected</dt><dd>${status.collected}</dd></div>
    <div><dt>Rejected</dt><dd>${status.rejected}</dd></div>
    <div><dt>Next poll</dt><dd>${status.nextRun ? html`<${When} iso=${status.nextRun} now=${now} />` : 'none: inactive'}</dd></div>
    ${status.feed ? html`<div><dt>Feed</dt><dd>${feedModeText(status.feed.mode)}, since <${When} iso=${status.feed.since} now=${now} /></dd></div>` : null}
    ${status.feed && (status.feed.mode !== 'poll' || status.feed.lastEvent)
      ? html`<div><dt>Last event</dt><dd>${status.feed.lastEvent ? html`<${When} iso=${status.feed.lastEvent} now=${now} />` : 'none yet'}</dd></div>`
      : null}
    ${status.warnings?.length
      ? html`<div class="sources__warnings"><dt>Warnings</dt>${status.warnings.map((warning) => html`<dd>${warning.message}</dd>`)}</div>`
      : null}
  </dl>`;
}

function InputRow(props: {
  input: Input;
  now: number;
  services: ServiceEntry[];
  credentials: Credential[];
  contractId: string;
  onSaved: (input: Input) => void;
  onDelete: (input: Input, button: HTMLButtonElement) => void;
}) {
  const { input } = props;
  const [editing, setEditing] = useState(() => hasDraft(`edit:${input._id}`));
  const [showRejections, setShowRejections] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [polled, setPolled] = useState<{ text: string; failed: boolean } | undefined>(undefined);
  const edit = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    if (wasEditing.current && !editing) edit.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  // Not `disabled` while busy: a disabled button loses the focus.
  const toggle = async () => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      props.onSaved(await api.put<Input>(`/collection/inputs/${input._id}`, bodyOf(input, { active: !input.active })));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const panelId = `rejections-${input._id}`;
  const name = input.title ?? input.input;

  // Poll now (docs/api.md#poll-now): the answer, or the refusal (429: too soon, or the host busy), in the row.
  const pollNow = async () => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    setPolled({ text: 'Checking the source now…', failed: false });
    try {
      const answer = await api.post<PollResult>(`/collection/inputs/${input._id}/poll`);
      props.onSaved(answer.input);
      setPolled({ text: pollResultText(answer), failed: answer.status === 'error' });
    } catch (caught) {
      setPolled(undefined);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return html`
    <tr role="row" class=${input.active ? '' : 'sources__inactive'}>
      <td role="cell" class="sources__short"><span class="sources__label" aria-hidden="true">Service</span>${input.service}</td>
      <td role="cell" class="sources__short"><span class="sources__label" aria-hidden="true">Type</span>${input.type}</td>
      <th role="rowheader" scope="row" class="sources__input"><span class="sources__label" aria-hidden="true">Input</span>${input.title ? html`<span class="sources__title">${input.title}</span> ` : null}<span class=${input.title ? 'sources__address' : ''}>${input.input}</span>${input.type === 'location' ? html`<span class="muted"> (${input.latitude}, ${input.longitude}, ${input.radius} m)</span>` : null}</th>
      <td role="cell" class="sources__short"><span class="sources__label" aria-hidden="true">Active</span>${input.active ? 'yes' : 'no'}</td>
      <td role="cell" class="sources__short"><span class="sources__label" aria-hidden="true">Display</span>${input.display ? 'yes' : 'no'}</td>
      <td role="cell"><span class="sources__label" aria-hidden="true">Health</span><${Health} input=${input} now=${props.now} credential=${credentialOf(input, props.services, props.credentials)} /></td>
      <td role="cell"><span class="sources__label" aria-hidden="true">Actions</span>
        <div class="buttons">
          <button type="button" class="secondary" aria-label=${`Poll now ${name}`} onClick=${pollNow}>Poll now</button>
          <button type="button" class="secondary" ref=${edit} aria-label=${`Edit ${input.input}`} onClick=${() => setEditing(true)}>Edit</button>
          <button type="button" class="secondary" aria-label=${`${input.active ? 'Deactivate' : 'Activate'} ${input.input}`} onClick=${toggle}>${input.active ? 'Deactivate' : 'Activate'}</button>
          <button type="button" class="danger" aria-label=${`Delete ${input.input}`} onClick=${(event: Event) => props.onDelete(input, event.currentTarget as HTMLButtonElement)}>Delete</button>
          <button type="button" class="secondary" aria-expanded=${showRejections ? 'true' : 'false'} aria-controls=${panelId} aria-label=${`Rejections of ${input.input}`} onClick=${() => setShowRejections(!showRejections)}>Rejections</button>
        </div>
        <p role="status" class=${polled?.failed ? 'sources__check-error' : 'muted'}>${polled?.text ?? ''}</p>
        <${ErrorBanner} error=${error} />
      </td>
    </tr>
    ${editing
      ? html`<tr role="row" class="sources__detail"><td role="cell" colspan="7">
          <${InputForm} services=${props.services} credentials=${props.credentials} contractId=${props.contractId} collectionId=${input.collectionId} input=${input} onDone=${(saved?: Input) => {
            setEditing(false);
            if (saved) props.onSaved(saved);
          }} />
        </td></tr>`
      : null}
    <tr role="row" class="sources__detail" id=${panelId} hidden=${!showRejections}><td role="cell" colspan="7">${showRejections ? html`<${RejectionList} input=${input} />` : null}</td></tr>
  `;
}

/** The modal confirmation of a delete (native `<dialog>`: focus kept inside, Escape cancels). */
function ConfirmDelete({ input, onClose }: { input: Input | undefined; onClose: (confirmed: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (input && element && !element.open) element.showModal();
    if (!input && element?.open) element.close();
  }, [input]);
  return html`<dialog ref=${dialog} class="sources__dialog" aria-labelledby="confirm-title" aria-describedby="confirm-text" onCancel=${(event: Event) => {
    event.preventDefault();
    onClose(false);
  }}>
    ${input
      ? html`<h2 id="confirm-title">Delete this source?</h2>
          <p id="confirm-text">Sluice stops collecting <strong>${input.input}</strong> (${input.service}, ${input.type}). The items it collected stay in the collection.</p>
          <div class="buttons">
            <button type="button" class="danger" onClick=${() => onClose(true)}>Delete source</button>
            <button type="button" class="secondary" autofocus onClick=${() => onClose(false)}>Cancel</button>
          </div>`
      : null}
  </dialog>`;
}

// ---------------------------------------------------------------------------------------------
// The screen

export default function Sources() {
  const contractId = useContractId()!;
  const mayAdmin = may(useRole(), 'admin');
  const { query } = useRoute();
  const [collections, setCollections] = useState<Collection[] | undefined>(undefined);
  const [services, setServices] = useState<ServiceEntry[] | undefined>(undefined);
  const [credentials, setCredentials] = useState<Credential[]>([]);
  const [inputs, setInputs] = useState<Input[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [now, setNow] = useState(() => Date.now());
  const [adding, setAdding] = useState<'one' | 'many' | undefined>(() =>
    // `?add=source`: the lead of an empty contract (contracts.ts) opens the form at once.
    hasDraft('add-input') || query.add === 'source' ? 'one' : hasDraft('bulk-feeds') ? 'many' : undefined,
  );
  const [deleting, setDeleting] = useState<{ input: Input; button: HTMLButtonElement } | undefined>(undefined);
  const [deleteError, setDeleteError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  // Where focus goes once the dialog has closed (the page behind a modal dialog cannot take it);
  // this effect runs after the dialog's own (children's effects run first).
  const focusAfter = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (!deleting && focusAfter.current) {
      focusAfter.current.focus();
      focusAfter.current = null;
    }
  }, [deleting]);

  // The collection of the address, else the last shown, else the first (chosen-collection.ts).
  const { chosen: collection, choose } = useChosenCollection(contractId, collections);
  const collectionId = collection?._id;

  useEffect(() => {
    let live = true;
    setCollections(undefined);
    setError(undefined);
    Promise.all([
      // The collections as soon as they come: the sources' read waits for nothing else.
      api.get<Collection[]>('/collection/collections', { contract_id: contractId }).then((list) => live && setCollections(list)),
      api.get<ServiceEntry[]>('/collection/services'),
      // Credentials are an admin's (docs/api.md#roles-and-scopes): an editor's form offers the contract default only.
      mayAdmin ? api.get<Credential[]>('/collection/credentials', { contract_id: contractId }) : Promise.resolve([]),
    ])
      .then(([, table, owned]) => live && (setServices(table), setCredentials(owned)))
      .catch((caught: unknown) => live && setError(caught));
    return () => {
      live = false;
    };
  }, [contractId, mayAdmin]);

  const inFlight = useRef(false);
  const load = useCallback(async () => {
    if (!collectionId || inFlight.current) return;
    inFlight.current = true;
    try {
      const list = await api.get<Input[]>('/collection/inputs', { contract_id: contractId, collection_id: collectionId });
      setInputs(list);
      setNow(Date.now());
      setError(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      inFlight.current = false;
    }
  }, [contractId, collectionId]);

  useEffect(() => {
    setInputs(undefined);
    void load();
    const timer = setInterval(() => document.visibilityState === 'visible' && void load(), POLL_MS);
    const visible = () => document.visibilityState === 'visible' && void load();
    document.addEventListener('visibilitychange', visible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', visible);
    };
  }, [load]);

  // An input fresher than the last read of the table (a poll now's answer): its times count from now.
  const saved = (input: Input) => {
    setInputs((list) => (list?.some((x) => x._id === input._id) ? list.map((x) => (x._id === input._id ? input : x)) : [...(list ?? []), input]));
    setNow(Date.now());
  };

  const closeAdding = (created?: Input | Input[]) => {
    setAdding(undefined);
    if (created) {
      const list = Array.isArray(created) ? created : [created];
      setInputs((current) => [...(current ?? []), ...list.filter((input) => !current?.some((x) => x._id === input._id))]);
      setNotice(`${list.length} source${list.length === 1 ? '' : 's'} added.`);
    }
    opener.current?.focus();
  };

  const confirmDelete = async (confirmed: boolean) => {
    const target = deleting;
    if (!target) return;
    if (!confirmed) {
      focusAfter.current = target.button;
      setDeleting(undefined);
      return;
    }
    try {
      await api.del(`/collection/inputs/${target.input._id}`);
      focusAfter.current = heading.current;
      setDeleting(undefined);
      setDeleteError(undefined);
      setInputs((list) => list?.filter((x) => x._id !== target.input._id));
      setNotice(`${target.input.input} deleted.`);
    } catch (caught) {
      focusAfter.current = target.button;
      setDeleting(undefined);
      setDeleteError(caught);
    }
  };

  const chooser = collections?.length
    ? html`<div class="field sources__chooser">
        <label for="collection-chooser">Collection</label>
        <select id="collection-chooser" value=${collectionId} onChange=${(event: Event) => choose((event.currentTarget as HTMLSelectElement).value)}>
          ${collections.map((c) => html`<option value=${c._id}>${c.name}</option>`)}
        </select>
      </div>`
    : null;

  return html`<${Screen} title="Sources">
    <${ErrorBanner} error=${error} />
    ${collections === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${collections && !collections.length
      ? html`<p>This contract has no collection yet. <a href=${screenPath(contractId, '')}>Create one</a> first, then add its sources here.</p>`
      : null}
    ${collection && services
      ? html`
          <div class="sources__bar">
            ${chooser}
            <div class="buttons">
              <button type="button" aria-expanded=${adding === 'one' ? 'true' : 'false'} onClick=${(event: Event) => {
                opener.current = event.currentTarget as HTMLButtonElement;
                setAdding(adding === 'one' ? undefined : 'one');
              }}>Add source</button>
              <button type="button" class="secondary" aria-expanded=${adding === 'many' ? 'true' : 'false'} onClick=${(event: Event) => {
                opener.current = event.currentTarget as HTMLButtonElement;
                setAdding(adding === 'many' ? undefined : 'many');
              }}>Add many feeds</button>
              <a href=${`${screenPath(contractId, 'moderation')}?collection=${encodeURIComponent(collection._id)}`}>Moderation of ${collection.name}</a>
            </div>
          </div>
          ${adding === 'one' ? html`<${InputForm} services=${services} credentials=${credentials} contractId=${contractId} collectionId=${collection._id} onDone=${closeAdding} onAdded=${saved} />` : null}
          ${adding === 'many' ? html`<${BulkForm} contractId=${contractId} collectionId=${collection._id} onDone=${closeAdding} />` : null}
          <p class="visually-hidden" role="status">${notice}</p>
          <${ErrorBanner} error=${deleteError} />
          <h2 id="sources-title" ref=${heading} tabindex="-1">Sources of ${collection.name}</h2>
          ${inputs === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
          ${inputs && !inputs.length ? html`<p>No sources yet: add the first one with Add source, or many feeds at once.</p>` : null}
          ${inputs?.length
            ? html`<table role="table" class="sources__table" aria-labelledby="sources-title">
                <thead role="rowgroup">
                  <tr role="row">${['Service', 'Type', 'Input', 'Active', 'Display', 'Health', 'Actions'].map((name) => html`<th role="columnheader" scope="col">${name}</th>`)}</tr>
                </thead>
                <tbody role="rowgroup">
                  ${inputs.map(
                    (input) => html`<${InputRow} key=${input._id} input=${input} now=${now} services=${services} credentials=${credentials} contractId=${contractId} onSaved=${saved}
                      onDelete=${(target: Input, button: HTMLButtonElement) => setDeleting({ input: target, button })} />`,
                  )}
                </tbody>
              </table>`
            : null}
          <${ConfirmDelete} input=${deleting?.input} onClose=${confirmDelete} />
        `
      : null}
  <//>`;
}
