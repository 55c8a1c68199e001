/**
 * What `npm start` prints on a terminal instead of the JSON summary of `sluice serve`: where the
 * console is, who to sign in as, and where that user's password is (never the password itself).
 * A pure function of the summary and the configuration (tested in greeting.test.ts).
 */
import { consoleUrl } from './first-party.ts';
import type { Config } from './config.ts';

export interface GreetingFacts {
  role: string;
  /** Where the server listens (`http://127.0.0.1:8080`). */
  url: string;
  /** Absolute path of the demo credentials file when it exists (written at the first start). */
  credentials?: string;
  /** The demo user's user name in that file. */
  username?: string;
}

/** Lines for the terminal, ending with a newline. */
export function greeting(facts: GreetingFacts, config: Pick<Config, 'apiUrl'>): string {
  const lines = [`Sluice is running (${facts.role}) on ${facts.url}`];
  if (facts.role === 'all' || facts.role === 'api') {
    lines.push('', `  Console   ${consoleUrl(config)}`);
    if (facts.credentials && facts.username) {
      lines.push(`  Sign in   as "${facts.username}"; the password is "user.password" in ${facts.credentials}`);
    } else {
      lines.push('  Sign in   with a user of this Sluice (create one: npm run sluice -- admin user create, see README "CLI")');
    }
    lines.push(`  APIs      ${config.apiUrl}/docs`);
  }
  lines.push('', 'Logs follow. Stop with Ctrl-C.', '');
  return lines.join('\n');
}
