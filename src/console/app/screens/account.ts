/**
 * The Account screen (`/console/account`, `ACCOUNT_PATH`): the signed-in user's own sign-ins,
 * under no contract and for every role (docs/api.md#account). All of it on the auth origin
 * (`config.authUrl`), through `api` like `/v1/oauth/me`:
 *
 * - **Change password** (`POST /v1/account/password` `{currentPassword, newPassword}`): the
 *   current, the new and the new again (the repetition is checked here; the API checks the
 *   rest, and its errors show at the field they name). Success says how many sign-in sessions
 *   and tokens elsewhere ended; this console keeps its token (the request's own token family).
 * - **Two-factor sign-in** (docs/api.md#two-factor-sign-in): the status (`GET
 *   /v1/account/two-factor`); Turn on (`POST …/two-factor`) shows the secret, grouped by four for
 *   typing, its `otpauth://` URI as a link and text, and a QR code of it (the `qrcode` package,
 *   already the publication's); a code confirms it (`POST …/confirm`) and the 10 recovery codes
 *   are shown this once, with Copy and Download as text. Turn off (`POST …/disable`, a code or a
 *   recovery code) and New recovery codes (`POST …/recovery-codes`, a code).
 * - **Sign out everywhere** (`POST /v1/account/logout-all`), after a confirmation: every token of
 *   the user is revoked, this console's too, so the console then signs out (`signOut`): the
 *   "signed out" page, from which the user signs in again.
 *
 * Passwords and codes are kept in component state only, never in a draft (`drafts.ts` keeps
 * input in sessionStorage).
 */
import QRCode from 'qrcode';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { signOut } from '../auth.ts';
import { config } from '../config.ts';
import { ErrorBanner, errorsFor, Field } from '../forms.ts';
import { html } from '../html.ts';
import type { Answer } from '../resources.ts';
import { Screen } from '../screen.ts';
import { useSession } from '../session.ts';

type Status = Answer<'/v1/account/two-factor', 'get'>;
type Enrolment = Answer<'/v1/account/two-factor', 'post'>;
type PasswordChanged = Answer<'/v1/account/password', 'post'>;

const account = (path: string) => `${config.authUrl}/v1/account${path}`;

/** A TOTP secret in groups of four characters, as it is typed into an authenticator app. */
export function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * A form's run state kept out of drafts: `run(work)` calls `work`, keeps its error for the
 * fields (`errorsFor`) and the banner (the entries no field in `fields` shows).
 */
function useAction(fields: string[]) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const unshown = error instanceof ApiError ? error.errors.filter((entry) => !fields.some((name) => errorsFor(new ApiError(400, [entry]), name).length)) : [];
  const formError = error instanceof ApiError ? (unshown.length ? new ApiError(error.status, unshown, error.requestId) : undefined) : error;
  return {
    error,
    formError,
    busy,
    run: (work: () => Promise<void>) => async (event?: Event) => {
      event?.preventDefault();
      if (busy) return;
      setBusy(true);
      setError(undefined);
      try {
        await work();
      } catch (caught) {
        setError(caught);
      } finally {
        setBusy(false);
      }
    },
  };
}

function ChangePassword() {
  const [values, setValues] = useState({ currentPassword: '', newPassword: '', repeatPassword: '' });
  const [done, setDone] = useState('');
  const said = useRef<HTMLParagraphElement>(null);
  const action = useAction(['currentPassword', 'newPassword', 'repeatPassword']);
  const set = (name: keyof typeof values) => (value: string) => setValues({ ...values, [name]: value });
  const submit = action.run(async () => {
    setDone('');
    if (values.newPassword !== values.repeatPassword) {
      throw new ApiError(400, [{ name: 'ValidationError', message: 'The new password and its repetition differ: type the same password twice.', propertyName: 'repeatPassword' }]);
    }
    const changed = await api.post<PasswordChanged>(account('/password'), { currentPassword: values.currentPassword, newPassword: values.newPassword });
    setValues({ currentPassword: '', newPassword: '', repeatPassword: '' });
    setDone(
      `Your password is changed. Signed out elsewhere: ${plural(changed.sessionsEnded, 'sign-in session')} ended and ${plural(changed.tokensRevoked, 'token')} revoked. This console stays signed in; the next sign-in asks for the new password.`,
    );
    requestAnimationFrame(() => said.current?.focus());
  });
  return html`<form class="card account__form" aria-labelledby="password-title" onSubmit=${submit}>
    <h2 id="password-title">Change password</h2>
    <${ErrorBanner} error=${action.formError} />
    <${Field} label="Current password" name="currentPassword" type="password" autoComplete="current-password" required value=${values.currentPassword} onInput=${set('currentPassword')} error=${action.error} />
    <${Field} label="New password" name="newPassword" type="password" autoComplete="new-password" required hint="8 to 1024 characters." value=${values.newPassword} onInput=${set('newPassword')} error=${action.error} />
    <${Field} label="New password again" name="repeatPassword" type="password" autoComplete="new-password" required value=${values.repeatPassword} onInput=${set('repeatPassword')} error=${action.error} />
    <button type="submit" disabled=${action.busy}>Change password</button>
    <p ref=${said} tabindex="-1" role="status" class="account__said">${done}</p>
  </form>`;
}

/** The recovery codes, shown this once, with Copy and Download as text. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const [copied, setCopied] = useState('');
  useEffect(() => heading.current?.focus(), [codes]);
  const text = `Sluice recovery codes (each works once instead of a code):\n${codes.join('\n')}\n`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Recovery codes copied.');
    } catch {
      const range = document.createRange();
      if (list.current) range.selectNodeContents(list.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied('Copying was refused by the browser: the codes are selected, copy them with the keyboard.');
    }
  };
  return html`<section class="account__codes" aria-labelledby="codes-title">
    <h3 id="codes-title" ref=${heading} tabindex="-1">Your recovery codes</h3>
    <p><strong>They will not be shown again.</strong> Keep them somewhere safe, apart from your phone: each works once instead of a code from the app, to sign in or to turn two-factor sign-in off.</p>
    <ol ref=${list} class="account__list">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
    <div class="buttons">
      <button type="button" onClick=${copy}>Copy</button>
      <a class="button secondary" download="sluice-recovery-codes.txt" href=${`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}>Download as text</a>
      <button type="button" class="secondary" onClick=${onDone}>I have saved them</button>
    </div>
    <p role="status" class="muted">${copied}</p>
  </section>`;
}

/** The pending enrolment: the secret (and its URI and QR code) for the app, then a code to confirm. */
function Enrol({ enrolment, onConfirmed, onCancel }: { enrolment: Enrolment; onConfirmed: (codes: string[]) => void; onCancel: () => void }) {
  const [code, setCode] = useState('');
  const [qr, setQr] = useState<string | undefined>(undefined);
  const action = useAction(['code']);
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(enrolment.uri, { margin: 1, width: 200 }).then((url) => live && setQr(url), () => undefined);
    return () => {
      live = false;
    };
  }, [enrolment.uri]);
  const submit = action.run(async () => {
    const confirmed = await api.post<Answer<'/v1/account/two-factor/confirm', 'post'>>(account('/two-factor/confirm'), { code: code.trim() });
    onConfirmed(confirmed.recoveryCodes);
  });
  return html`<form onSubmit=${submit} aria-labelledby="enrol-title">
    <h3 id="enrol-title">Add Sluice to your authenticator app</h3>
    <ol class="account__steps">
      <li>
        <p>Scan the QR code, or type the secret key into the app (time-based, 6 digits, every 30 seconds):</p>
        ${qr ? html`<img class="account__qr" src=${qr} width="200" height="200" alt="QR code of the otpauth address below" />` : null}
        <p>Secret key: <code class="account__secret">${grouped(enrolment.secret)}</code></p>
        <p class="account__uri">On this device: <a href=${enrolment.uri}>open in an authenticator app</a> (<code>${enrolment.uri}</code>)</p>
      </li>
      <li>
        <${ErrorBanner} error=${action.formError} />
        <${Field} label="Code from the app" name="code" autoComplete="one-time-code" inputMode="numeric" required autoFocus value=${code} onInput=${setCode} error=${action.error} />
      </li>
    </ol>
    <div class="buttons">
      <button type="submit" disabled=${action.busy}>Turn on</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

/** A form asking for one code (`label`), posting it to `path` of the account; `onDone` gets the answer. */
function CodeForm<T>({ title, hint, label, button, path, danger, onDone }: { title: string; hint: string; label: string; button: string; path: string; danger?: boolean; onDone: (answer: T) => void }) {
  const [code, setCode] = useState('');
  const action = useAction(['code']);
  const submit = action.run(async () => {
    const answer = await api.post<T>(account(path), { code: code.trim() });
    setCode('');
    onDone(answer);
  });
  return html`<form class="account__code" onSubmit=${submit} aria-label=${title}>
    <h3>${title}</h3>
    <p class="muted">${hint}</p>
    <${ErrorBanner} error=${action.formError} />
    <${Field} label=${label} name="code" autoComplete="one-time-code" required value=${code} onInput=${setCode} error=${action.error} />
    <button type="submit" class=${danger ? 'danger' : undefined} disabled=${action.busy}>${button}</button>
  </form>`;
}

function TwoFactor() {
  const [status, setStatus] = useState<Status | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>(undefined);
  const [codes, setCodes] = useState<string[] | undefined>(undefined);
  const [message, setMessage] = useState('');
  const start = useAction([]);
  const load = async () => {
    try {
      setStatus(await api.get<Status>(account('/two-factor')));
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  };
  useEffect(() => void load(), []);
  const after = (said: string) => {
    setMessage(said);
    void load();
  };
  let body;
  if (codes) {
    body = html`<${RecoveryCodes} codes=${codes} onDone=${() => setCodes(undefined)} />`;
  } else if (enrolment) {
    body = html`<${Enrol} enrolment=${enrolment} onCancel=${() => setEnrolment(undefined)} onConfirmed=${(recoveryCodes: string[]) => {
      setEnrolment(undefined);
      setCodes(recoveryCodes);
      after('Two-factor sign-in is on: the next sign-in asks for a code from the app.');
    }} />`;
  } else if (status?.enabled) {
    body = html`<p><strong>On.</strong> Signing in asks for a code from your authenticator app after the password. ${plural(status.recoveryCodesLeft, 'recovery code')} left.</p>
      <div class="account__pair">
        <${CodeForm} title="New recovery codes" hint="The old codes stop working." label="Code from the app" button="New recovery codes" path="/two-factor/recovery-codes"
          onDone=${(answer: { recoveryCodes: string[] }) => {
            setCodes(answer.recoveryCodes);
            after('New recovery codes: the old ones no longer work.');
          }} />
        <${CodeForm} title="Turn off two-factor sign-in" hint="A code from the app, or one of your recovery codes." label="Code or recovery code" button="Turn off" path="/two-factor/disable" danger
          onDone=${() => after('Two-factor sign-in is off: the password alone signs in.')} />
      </div>`;
  } else if (status) {
    body = html`<p><strong>Off.</strong> With two-factor sign-in, signing in also asks for a code from an authenticator app on your phone, so a password alone is not enough. A contract's owner may require it.</p>
      <${ErrorBanner} error=${start.formError} />
      <button type="button" disabled=${start.busy} onClick=${start.run(async () => {
        setMessage('');
        setEnrolment(await api.post<Enrolment>(account('/two-factor')));
      })}>Turn on two-factor sign-in</button>`;
  }
  return html`<section class="card" aria-labelledby="two-factor-title">
    <h2 id="two-factor-title">Two-factor sign-in</h2>
    <${ErrorBanner} error=${error} />
    <p role="status" class="account__said">${message}</p>
    ${status === undefined && !error ? html`<p class="muted">Loading…</p>` : body}
  </section>`;
}

function SignOutEverywhere() {
  const [asking, setAsking] = useState(false);
  const action = useAction([]);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  const leave = action.run(async () => {
    await api.post(account('/logout-all'));
    // This console's token is revoked too: sign out here, which ends on the "signed out" page.
    await signOut();
  });
  return html`<section class="card" aria-labelledby="everywhere-title">
    <h2 id="everywhere-title">Sign out everywhere</h2>
    <p>Ends every sign-in of your account: other browsers, phones and applications, and this console. Use it when a device was lost or your password may be known to someone else.</p>
    <${ErrorBanner} error=${action.formError} />
    ${asking
      ? html`<div class="account__confirm" role="group" aria-labelledby="everywhere-ask">
          <p id="everywhere-ask"><strong>Sign out of every browser and application, this one included?</strong></p>
          <div class="buttons">
            <button type="button" class="danger" ref=${confirmRef} disabled=${action.busy} onClick=${leave}>Yes, sign out everywhere</button>
            <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
          </div>
        </div>`
      : html`<button type="button" class="secondary" onClick=${() => setAsking(true)}>Sign out everywhere…</button>`}
  </section>`;
}

/** The screen of the module's description. */
export default function Account() {
  const { me } = useSession();
  return html`<${Screen} title="Account">
    ${me ? html`<p class="muted">Signed in as <strong>${me.consumer_name}</strong> (${me.consumer_email}).</p>` : null}
    <${ChangePassword} />
    <${TwoFactor} />
    <${SignOutEverywhere} />
  <//>`;
}
