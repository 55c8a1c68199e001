/**
 * The console's entry: finishes or starts the sign-in (`auth.ts`), then renders the shell
 * (`shell.ts`) and loads the user and contracts (`session.ts`). Every outcome renders something:
 * the app, "signed out", or the sign-in error with a way to try again.
 */
import { render } from 'preact';
import { completeSignIn, signIn } from './auth.ts';
import { html } from './html.ts';
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
