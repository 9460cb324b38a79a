// Driving the dashboard's pages through `inject` as a browser without script would: a cookie jar,
// the form's CSRF token read from the page, forms posted url-encoded.
import { expect } from 'vitest';
import type { Harness } from './harness.js';

export interface Page {
  status: number;
  headers: Record<string, unknown>;
  html: string;
  location?: string;
}

/** The value of the first `name="_csrf"` input of a page. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1];
}

export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly h: Harness) {}

  private keep(setCookie: unknown) {
    for (const line of ([] as string[]).concat((setCookie as string | string[] | undefined) ?? [])) {
      const [pair, ...attrs] = line.split(';');
      const [name, ...value] = pair.split('=');
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value.join('=') === '') this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value.join('='));
    }
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<Page> {
    const res = await this.h.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader(), ...headers } });
    this.keep(res.headers['set-cookie']);
    return { status: res.statusCode, headers: res.headers, html: res.body, location: res.headers.location as string | undefined };
  }

  async post(url: string, form: Record<string, string | string[]>): Promise<Page> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of ([] as string[]).concat(v)) body.append(k, one);
    const res = await this.h.app.inject({
      method: 'POST', url, payload: body.toString(),
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
    });
    this.keep(res.headers['set-cookie']);
    return { status: res.statusCode, headers: res.headers, html: res.body, location: res.headers.location as string | undefined };
  }

  /** Posts the form of the page at `pageUrl` (its CSRF token) to `action`. */
  async submit(pageUrl: string, action: string, form: Record<string, string | string[]>): Promise<Page> {
    const page = await this.get(pageUrl);
    return this.post(action, { _csrf: csrfOf(page.html), ...form });
  }

  async signIn(email: string, password: string): Promise<Page> {
    return this.submit('/dashboard/login', '/dashboard/login', { email, password });
  }
}

/** A browser signed in to the dashboard as `email` (the test accounts' password by default). */
export async function signedInBrowser(h: Harness, email: string, password = 'correct-horse'): Promise<Browser> {
  const browser = new Browser(h);
  const signedIn = await browser.signIn(email, password);
  expect(signedIn.status, signedIn.html).toBe(303);
  return browser;
}
