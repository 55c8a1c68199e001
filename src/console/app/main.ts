/**
 * The console's entry: finishes or starts the sign-in (`auth.ts`), then renders the shell
 * (`shell.ts`) and loads the user and contracts (`session.ts`). Every outcome renders something:
 * the app, "signed out", or the sign-in error with a way to try again. Signed in, the screen of
 * the address starts loading its chunk and the contract's collections at once, beside the session
 * (issue 33, "Fast").
 */
import { render } from 'preact';
import { prefetch } from './api.ts';
import { completeSignIn, signIn } from './auth.ts';
import { html } from './html.ts';
import { locate } from './paths.ts';
import { SCREENS } from './routes.ts';
import { loadSession } from './session.ts';
import { App } from './shell.ts';

const root = document.getElementById('app')!;
// Preact renders beside what is there: the static "Loading…" goes first.
root.replaceChildren();

function Standalone({ title, message, action }: { title: string; message: string; action: string }) {
  document.title = `${title} · Sluice console`;
  return html`<main id="main" class="standalone">
    <h1>${title}</h1>
    <p>${message}</p>
    <button type="button" onClick=${() => void signIn('/console/').catch((error: Error) => render(html`<${Standalone} title="Sign-in failed" message=${error.message} action="Try again" />`, root))}>${action}</button>
  </main>`;
}

async function start(): Promise<void> {
  let outcome;
  try {
    outcome = await completeSignIn();
  } catch (error) {
    outcome = { kind: 'error' as const, message: error instanceof Error ? error.message : String(error) };
  }
  if (outcome.kind === 'signed-in') {
    // While the session loads: the screen's chunk, and the contract's collections most screens read first.
    const { contractId, segment } = locate(location.pathname);
    void SCREENS.find((entry) => entry.segment === segment)?.preload?.().catch(() => undefined);
    if (contractId) prefetch('/collection/collections', { contract_id: contractId });
    render(html`<${App} />`, root);
    await loadSession();
  } else if (outcome.kind === 'signed-out') {
    render(html`<${Standalone} title="You are signed out" message="Your access token was revoked and your sign-in ended." action="Sign in" />`, root);
  } else if (outcome.kind === 'error') {
    render(html`<${Standalone} title="Sign-in failed" message=${outcome.message} action="Try again" />`, root);
  } else {
    render(html`<p class="boot" role="status">Signing in…</p>`, root);
    await signIn().catch((error: Error) => render(html`<${Standalone} title="Sign-in failed" message=${error.message} action="Try again" />`, root));
  }
}

void start();
