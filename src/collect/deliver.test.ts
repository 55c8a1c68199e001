import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signedRequest } from './deliver.ts';

describe('signedRequest', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const payload = '{"type":"item.published","timestamp":"2026-11-28T10:00:00.000Z","data":{"itemId":"rss_1"}}';

  it.each([
    ['msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 1_700_000_000_000],
    ['msg_000000000000000000000000', 1_700_000_000_999],
  ])('signs %s at %i so that the standardwebhooks verifier accepts it', (eventId, at) => {
    const headers = signedRequest({ eventId, payload }, secret, at);
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': eventId, 'webhook-timestamp': String(Math.floor(at / 1000)) });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // The verifier checks the timestamp against its clock: verify as of the signing time.
    const realNow = Date.now;
    Date.now = () => at;
    try {
      expect(new Webhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload));
      expect(() => new Webhook(secret).verify(payload.replace('rss_1', 'rss_2'), headers)).toThrow();
      expect(() => new Webhook('whsec_' + Buffer.from('another secret of 24 byte').toString('base64')).verify(payload, headers)).toThrow();
    } finally {
      Date.now = realNow;
    }
  });
});
