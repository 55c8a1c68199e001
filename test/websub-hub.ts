/**
 * A fake WebSub hub (W3C WebSub §5–§8) on 127.0.0.1 for tests and bench:freshness: it takes
 * subscription requests (form POST: `hub.mode`, `hub.callback`, `hub.topic`, `hub.secret`,
 * `hub.lease_seconds`), answers 202, then verifies the intent by calling the callback with a
 * random `hub.challenge` (and `hub.lease_seconds` = `leaseSeconds`) and keeps the subscription
 * when the challenge comes back; `publish` distributes a body to a topic's subscribers, signed
 * (`X-Hub-Signature`, HMAC of the body with the subscriber's secret) as asked.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HubRequest {
  mode: string;
  callback: string;
  topic: string;
  secret: string | null;
  leaseSeconds: string | null;
}

export interface HubVerification {
  callback: string;
  mode: string;
  status: number;
  /** Whether the callback echoed the challenge. */
  confirmed: boolean;
}

/** How `publish` signs: a method, none, or a wrong signature (right format, wrong key). */
export type Signing = 'sha1' | 'sha256' | 'sha384' | 'sha512' | 'none' | 'wrong';

export interface FakeHub {
  /** The hub's URL (what feeds name in `<link rel="hub">`). */
  url: string;
  requests: HubRequest[];
  verifications: HubVerification[];
  /** Verified subscriptions: callback → topic and secret. */
  subscribers: Map<string, { topic: string; secret: string | null }>;
  /** `hub.lease_seconds` sent in verifications. */
  leaseSeconds: number;
  /** While true, subscription requests are answered 503 (a hub down). */
  down: boolean;
  /** Resolves once `count` verifications have completed (bounded by `timeoutMs`). */
  verified(count: number, timeoutMs?: number): Promise<void>;
  /** POSTs `body` to every subscriber of `topic`; answers their statuses. */
  publish(topic: string, body: string | Buffer, options?: { sign?: Signing; contentType?: string }): Promise<number[]>;
  close(): Promise<void>;
}

/** `X-Hub-Signature` of `body` with `secret` (W3C WebSub §8.1). */
export function hubSignature(method: string, secret: string, body: string | Buffer): string {
  return `${method}=${createHmac(method, secret).update(body).digest('hex')}`;
}

export async function startFakeHub(leaseSeconds = 3600): Promise<FakeHub> {
  const requests: HubRequest[] = [];
  const verifications: HubVerification[] = [];
  const subscribers = new Map<string, { topic: string; secret: string | null }>();
  const waiting: Array<() => void> = [];

  async function verify(request: HubRequest): Promise<void> {
    const challenge = randomBytes(12).toString('hex');
    const url = new URL(request.callback);
    url.searchParams.set('hub.mode', request.mode);
    url.searchParams.set('hub.topic', request.topic);
    url.searchParams.set('hub.challenge', challenge);
    if (request.mode === 'subscribe') url.searchParams.set('hub.lease_seconds', String(hub.leaseSeconds));
    let status = 0;
    let confirmed = false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      status = res.status;
      confirmed = res.status >= 200 && res.status < 300 && (await res.text()) === challenge;
    } catch {
      // Unreachable callback: not verified.
    }
    if (confirmed && request.mode === 'subscribe') subscribers.set(request.callback, { topic: request.topic, secret: request.secret });
    if (confirmed && request.mode === 'unsubscribe') subscribers.delete(request.callback);
    verifications.push({ callback: request.callback, mode: request.mode, status, confirmed });
    for (const wake of waiting.splice(0)) wake();
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const request: HubRequest = {
        mode: form.get('hub.mode') ?? '',
        callback: form.get('hub.callback') ?? '',
        topic: form.get('hub.topic') ?? '',
        secret: form.get('hub.secret'),
        leaseSeconds: form.get('hub.lease_seconds'),
      };
      requests.push(request);
      if (hub.down) {
        res.writeHead(503).end('down');
        return;
      }
      if (req.method !== 'POST' || !['subscribe', 'unsubscribe'].includes(request.mode) || !request.callback || !request.topic) {
        res.writeHead(400).end('bad request');
        return;
      }
      res.writeHead(202).end();
      void verify(request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const hub: FakeHub = {
    url: `http://127.0.0.1:${port}/hub`,
    requests,
    verifications,
    subscribers,
    leaseSeconds,
    down: false,
    async verified(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (verifications.length < count) {
        if (Date.now() > deadline) throw new Error(`the hub saw ${verifications.length} verifications, not ${count}, within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    async publish(topic, body, options = {}) {
      const sign = options.sign ?? 'sha256';
      const targets = [...subscribers].filter(([, s]) => s.topic === topic);
      return Promise.all(targets.map(async ([callback, { secret }]) => {
        const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/atom+xml' };
        if (sign === 'wrong') headers['x-hub-signature'] = hubSignature('sha256', 'not the secret', body);
        else if (sign !== 'none' && secret !== null) headers['x-hub-signature'] = hubSignature(sign, secret, body);
        const res = await fetch(callback, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        return res.status;
      }));
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return hub;
}
