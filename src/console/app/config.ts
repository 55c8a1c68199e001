/**
 * Where the console finds the APIs: the server writes them into `<meta name="sluice-console">`
 * of index.html (`src/console/routes.ts`) as JSON, from AUTH_URL, API_URL and QUEUE_URL.
 */
export interface ConsoleConfig {
  /** Base addresses, no trailing slash. */
  authUrl: string;
  apiUrl: string;
  queueUrl: string;
  /** The console's OAuth client id (`sluice-console`) and its redirect URI (`<API_URL>/console/`). */
  clientId: string;
  redirectUri: string;
}

function read(): ConsoleConfig {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="sluice-console"]');
  if (!meta) throw new Error('The console page lacks its configuration (meta sluice-console).');
  return JSON.parse(meta.content) as ConsoleConfig;
}

export const config: ConsoleConfig = read();

/** The console's own paths start here (routes, links). */
export const BASE = '/console';
