/**
 * Shared form parts, so every screen shows errors the same way (docs: `src/console/README.md`).
 *
 * - `useForm(key, initial)`: the form's values as a draft (`drafts.ts`), `submit(work)` runs
 *   `work(values)` and sorts an `ApiError`'s entries: those whose `propertyName` names a field
 *   (`fieldNames`) go next to it, the rest into `formError` for `ErrorBanner`.
 * - `Field`: a labelled input (or select / textarea) with its error below, linked by
 *   `aria-describedby` and `aria-invalid`.
 * - `SubmitOrCancel`: a form's submit button and Cancel, which drops the draft.
 * - `ErrorBanner`: an error in place (role=alert): a 403 says the user has no access to the
 *   contract (a refusal naming `role` shows its own message: the role it needs; one naming
 *   `twoFactor` its own, with a link to the Account screen to turn two-factor sign-in on,
 *   docs/api.md#requiring-two-factor-sign-in); an `ApiError` shows its messages; anything else its message.
 */
import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type ErrorEntry } from './api.ts';
import { useDraft } from './drafts.ts';
import { html } from './html.ts';
import { ACCOUNT_PATH } from './paths.ts';

/** Entries of `error` that name `propertyName` (exactly, or as `propertyName[...]`/`propertyName.…`). */
export function errorsFor(error: unknown, propertyName: string): ErrorEntry[] {
  if (!(error instanceof ApiError)) return [];
  return error.errors.filter((entry) => entry.propertyName === propertyName || entry.propertyName?.startsWith(`${propertyName}[`) || entry.propertyName?.startsWith(`${propertyName}.`));
}

export const NO_ACCESS = 'You have no access to this contract. Ask the operator of this Sluice to grant it to you, or choose another contract.';

/** An error in place (role=alert); nothing when `error` is undefined. */
export function ErrorBanner({ error, children }: { error: unknown; children?: ComponentChildren }) {
  if (error === undefined || error === null) return null;
  let messages: string[];
  // A refusal for the role (docs/api.md#roles-and-scopes) says which role it needs, one for
  // two-factor sign-in what to do; any other 403 is no access to the contract.
  const twoFactor = error instanceof ApiError && error.status === 403 && error.errors.some((entry) => entry.propertyName === 'twoFactor');
  if (error instanceof ApiError && error.status === 403 && !twoFactor && !error.errors.some((entry) => entry.propertyName === 'role')) messages = [NO_ACCESS];
  else if (error instanceof ApiError) messages = error.errors.map((entry) => entry.message);
  else messages = [error instanceof Error ? error.message : String(error)];
  return html`<div class="banner banner--error" role="alert">
    ${messages.map((message) => html`<p>${message}</p>`)}
    ${twoFactor ? html`<p><a href=${ACCOUNT_PATH}>Turn on two-factor sign-in on the Account screen</a></p>` : null}
    ${error instanceof ApiError && error.requestId ? html`<p class="muted">Request ${error.requestId}</p>` : null}
    ${children}
  </div>`;
}

export interface FieldProps {
  label: string;
  /** The API's `propertyName` for this field; errors naming it are shown here. */
  name: string;
  value: string;
  onInput: (value: string) => void;
  error?: unknown;
  type?: string;
  required?: boolean;
  hint?: string;
  /** `select` options as [value, label]. */
  options?: [string, string][];
  multiline?: boolean;
  /** Take focus when it appears (a form opened by a button). */
  autoFocus?: boolean;
  /** The input's `autocomplete` (HTML autofill tokens: `current-password`, `new-password`, `one-time-code`). */
  autoComplete?: string;
  /** The input's `inputmode` (`numeric` for a code). */
  inputMode?: string;
}

/** A labelled control with its hint and its errors (by `propertyName`). */
export function Field(props: FieldProps) {
  const id = useId();
  const errors = errorsFor(props.error, props.name);
  const describedBy = [props.hint ? `${id}-hint` : '', errors.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const ref = useRef<HTMLElement>(null);
  // `autofocus` counts only while a page loads: a field that appears later takes focus here, as it
  // is mounted (a layout effect: a deferred one could land after the user, or a test, already
  // moved on to another field, and take the focus back from it).
  useLayoutEffect(() => {
    if (props.autoFocus) ref.current?.focus();
  }, []);
  const common = {
    ref,
    id,
    name: props.name,
    required: props.required,
    'aria-invalid': errors.length ? 'true' : undefined,
    'aria-describedby': describedBy,
    onInput: (event: Event) => props.onInput((event.currentTarget as HTMLInputElement).value),
  };
  const control = props.options
    ? html`<select ...${common} value=${props.value}>${props.options.map(([value, label]) => html`<option value=${value}>${label}</option>`)}</select>`
    : props.multiline
      ? html`<textarea ...${common} value=${props.value}></textarea>`
      : html`<input ...${common} type=${props.type ?? 'text'} value=${props.value} autocomplete=${props.autoComplete} inputmode=${props.inputMode} />`;
  return html`<div class="field">
    <label for=${id}>${props.label}</label>
    ${props.hint ? html`<p class="hint" id=${`${id}-hint`}>${props.hint}</p>` : null}
    ${control}
    ${errors.length ? html`<p class="field__error" id=${`${id}-error`}>${errors.map((entry) => entry.message).join(' ')}</p>` : null}
  </div>`;
}

export interface Form<T> {
  values: T;
  set: <K extends keyof T>(name: K) => (value: T[K]) => void;
  /** The last error (an `ApiError` or other); fields show their own entries of it. */
  error: unknown;
  /** The entries no field shows, for `ErrorBanner` (undefined when none). */
  formError: unknown;
  busy: boolean;
  /** An `onSubmit` handler: prevents the page load, runs `work`, clears the draft when it succeeds. */
  submit: (work: (values: T) => Promise<unknown>) => (event?: Event) => Promise<void>;
  reset: () => void;
}

/**
 * A form's buttons: submit, named `label` and disabled while the form is busy (or `disabled`),
 * and Cancel, which drops the form's draft (`reset`) and then calls `onCancel`.
 */
export function SubmitOrCancel({ form, label, disabled, onCancel }: { form: Pick<Form<never>, 'busy' | 'reset'>; label: ComponentChildren; disabled?: boolean; onCancel: () => void }) {
  return html`<div class="buttons">
    <button type="submit" disabled=${form.busy || disabled}>${label}</button>
    <button type="button" class="secondary" onClick=${() => {
      form.reset();
      onCancel();
    }}>Cancel</button>
  </div>`;
}

/** A form whose values are a draft under `key` (see `drafts.ts`); `fieldNames` are the shown fields. */
export function useForm<T extends Record<string, unknown>>(key: string, initial: T, fieldNames: string[] = Object.keys(initial)): Form<T> {
  const [values, setValues, clear] = useDraft<T>(key, initial);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const shown = (entry: ErrorEntry) => fieldNames.some((name) => errorsFor(new ApiError(400, [entry]), name).length > 0);
  const formError = error instanceof ApiError ? (error.errors.some((entry) => !shown(entry)) ? new ApiError(error.status, error.errors.filter((entry) => !shown(entry)), error.requestId) : undefined) : error;
  return {
    values,
    set: (name) => (value) => setValues({ ...values, [name]: value }),
    error,
    formError,
    busy,
    submit: (work) => async (event) => {
      event?.preventDefault();
      if (busy) return;
      setBusy(true);
      setError(undefined);
      try {
        await work(values);
        clear();
      } catch (caught) {
        setError(caught);
      } finally {
        setBusy(false);
      }
    },
    reset: () => {
      clear();
      setError(undefined);
    },
  };
}
