import { describe, expect, it } from 'vitest';
import { localPaymentBaseUrl, localPublicBaseUrl } from '../../scripts/payment-base-url.mjs';

// `npm run dev`'s PAYMENT_BASE_URL (scripts/payment-base-url.mjs): a base on this machine follows PORT, another
// host (a tunnel) and a base given on the command line are kept. The e2e suite checks the first case end to end.

describe('the local PAYMENT_BASE_URL of npm run dev', () => {
  it('follows PORT while it names this machine (or is not set)', () => {
    for (const configured of ['http://localhost:8787', 'http://127.0.0.1:8787', 'http://[::1]:8787/', undefined]) {
      expect(localPaymentBaseUrl('8913', [], configured)).toEqual({ url: 'http://localhost:8913', varArgs: ['--var', 'PAYMENT_BASE_URL:http://localhost:8913'] });
    }
  });

  it('keeps another host from .dev.vars, and a base given with --var', () => {
    expect(localPaymentBaseUrl('8913', [], 'https://shop.trycloudflare.com')).toEqual({ url: 'https://shop.trycloudflare.com', varArgs: [] });
    const args = ['--var', 'ADMIN_TOKEN:x', '--var', 'PAYMENT_BASE_URL:https://tunnel.example'];
    expect(localPaymentBaseUrl('8913', args, 'http://localhost:8787')).toEqual({ url: 'https://tunnel.example', varArgs: [] });
  });

  it('treats a value that is not a URL as not this machine: kept, for the worker to refuse as it would anyway', () => {
    expect(localPaymentBaseUrl('8913', [], 'not a url')).toEqual({ url: 'not a url', varArgs: [] });
  });
});

describe('the local PUBLIC_BASE_URL of npm run dev (where links in emails point)', () => {
  it('follows PORT while it names this machine (or is not set); another host and a --var are kept', () => {
    for (const configured of ['http://localhost:8787', undefined]) {
      expect(localPublicBaseUrl('8913', [], configured)).toEqual({ url: 'http://localhost:8913', varArgs: ['--var', 'PUBLIC_BASE_URL:http://localhost:8913'] });
    }
    expect(localPublicBaseUrl('8913', [], 'https://shop.trycloudflare.com')).toEqual({ url: 'https://shop.trycloudflare.com', varArgs: [] });
    const args = ['--var', 'PAYMENT_BASE_URL:https://tunnel.example', '--var', 'PUBLIC_BASE_URL:https://shop.example'];
    expect(localPublicBaseUrl('8913', args, 'http://localhost:8787')).toEqual({ url: 'https://shop.example', varArgs: [] });
    expect(localPaymentBaseUrl('8913', args, 'http://localhost:8787')).toEqual({ url: 'https://tunnel.example', varArgs: [] });
  });
});
