/**
 * A browser for HTTP tests of the sign-in pages, over `app.inject`: a cookie jar (what responses
 * set is sent back, deleted cookies dropped) and the hidden fields of a page's form.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** A tiny cookie jar: what the responses set, sent back on the next requests. */
export class Browser {
  readonly app: FastifyInstance;
  readonly jar = new Map<string, string>();
  remoteAddress = '127.0.0.1';
  constructor(app: FastifyInstance) {
    this.app = app;
  }
  private keep(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.value === '' || c.maxAge === 0) this.jar.delete(c.name);
      else this.jar.set(c.name, c.value);
    }
    return res;
  }
  private get cookie() {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  /** GET `url` with the jar's cookies and `headers` (e.g. the Fetch Metadata a browser adds). */
  async get(url: string, headers: Record<string, string> = {}) {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookie, accept: 'text/html', ...headers }, remoteAddress: this.remoteAddress }));
  }
  /** POST the form fields `form` to `url` with the jar's cookies and `headers`. */
  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...headers },
        payload: new URLSearchParams(form).toString(),
        remoteAddress: this.remoteAddress,
      }),
    );
  }
}

/** The hidden fields of the first form whose action is `action`, from an HTML page. */
export function formFields(html: string, action: string): Record<string, string> {
  const form = html.split(`action="${action}"`)[1]?.split('</form>')[0];
  expect(form, `no form ${action}`).toBeDefined();
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return Object.fromEntries([...form!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]));
}
