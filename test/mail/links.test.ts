import { describe, expect, it } from 'vitest';
import type { EmailJob } from '../../src/services/mail/outbox';
import { createCheckedApp } from '../contract';
import { freshIp, PASSWORD } from '../dashboard-helpers';
import { callWithQueue, emailsTo, recordingQueue, send } from '../email-helpers';
import { newProduct, newUser, unique } from '../helpers';

// Every link in an email starts with PUBLIC_BASE_URL (pinned to http://localhost in vitest.config.ts), never with the
// request's Host: `Host: evil.example` on "Forgot password?" used to mail a valid reset link to http://evil.example/.
// Unset, an email that needs a link is recorded failed and never sent.

const EVIL = 'http://evil.example';
let app: ReturnType<typeof createCheckedApp> | undefined;

/** A request that reached the worker under another host name (the URL a worker sees is built from the Host header). */
async function viaEvilHost(path: string, init: RequestInit, vars: Record<string, unknown> = {}) {
  const queue = recordingQueue();
  const headers = { Host: 'evil.example', 'CF-Connecting-IP': freshIp(), ...(init.headers as Record<string, string>) };
  const res = await (app ??= createCheckedApp()).request(`${EVIL}${path}`, { ...init, headers, redirect: 'manual' }, { EMAIL_QUEUE: queue.queue, ...vars });
  return { res, jobs: queue.jobs };
}

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  body: JSON.stringify(body),
  headers: { 'Content-Type': 'application/json', ...headers },
});

async function sentText(jobs: EmailJob[]): Promise<string> {
  const { sent } = await send(jobs);
  expect(sent).toHaveLength(jobs.length);
  return sent.map((m) => `${m.text}\n${m.html}`).join('\n');
}

describe('links in emails', () => {
  it('a reset link asked for with Host: evil.example points at PUBLIC_BASE_URL', async () => {
    const user = await newUser();
    const { res, jobs } = await viaEvilHost('/api/v2/auth/forgot-password', json({ email: user.email }));
    expect(res.status).toBe(202);
    expect(jobs).toHaveLength(1);
    expect(jobs[0].link).toMatch(/^http:\/\/localhost\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/);
    const text = await sentText(jobs);
    expect(text).toContain(jobs[0].link);
    expect(text).not.toContain('evil.example');
  });

  it('follows PUBLIC_BASE_URL as configured (trailing slash dropped)', async () => {
    const user = await newUser();
    const { jobs } = await viaEvilHost('/api/v2/auth/forgot-password', json({ email: user.email }), { PUBLIC_BASE_URL: 'https://shop.example.com/' });
    expect(jobs[0].link).toMatch(/^https:\/\/shop\.example\.com\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/);
  });

  it('a receipt and a verification link made through another host point at PUBLIC_BASE_URL too', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 2 });
    const bought = await viaEvilHost('/api/v2/orders', json({ product_id: product.id, quantity: 1 }, { 'X-API-Key': user.key }));
    expect(bought.res.status).toBe(201);
    const [receipt] = await emailsTo(user.email);
    expect(JSON.parse(receipt.data).order_url).toBe(`http://localhost/dashboard/orders/${(await bought.res.json<{ data: { id: number } }>()).data.id}`);
    const receiptText = await sentText(bought.jobs);
    expect(receiptText).toContain('http://localhost/dashboard/orders/');
    expect(receiptText).not.toContain('evil.example');

    const email = `${unique('signup')}@example.com`;
    const form = new URLSearchParams({ name: 'New Buyer', email, password: PASSWORD, password_confirmation: PASSWORD }).toString();
    const signUp = await viaEvilHost(
      '/dashboard/sign-up',
      { method: 'POST', body: form, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: EVIL } },
      { EMAIL_VERIFICATION: 'required' },
    );
    expect(signUp.res.status).toBe(303);
    expect(signUp.jobs).toHaveLength(1);
    expect(signUp.jobs[0].link).toMatch(/^http:\/\/localhost\/dashboard\/verify-email\/[A-Za-z0-9_-]{43}$/);
  });
});

describe('PUBLIC_BASE_URL unset', () => {
  for (const unset of ['', 'not a url', 'javascript:alert(1)']) {
    it(`(${JSON.stringify(unset)}) an email that needs a link is recorded failed, never enqueued; one without a link is sent`, async () => {
      const vars = { PUBLIC_BASE_URL: unset };
      const user = await newUser({ balance: 5 });
      const product = await newProduct({ price: 1, stock: 2 });
      const forgot = await callWithQueue('/auth/forgot-password', { body: { email: user.email }, vars });
      expect(forgot.res.status).toBe(202);
      expect(forgot.jobs).toEqual([]);
      const bought = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, vars });
      expect(bought.res.status).toBe(201);
      expect(bought.jobs).toEqual([]);
      const changed = await callWithQueue('/user/password', {
        key: user.key,
        method: 'POST',
        body: { current_password: PASSWORD, new_password: 'another good password', new_password_confirmation: 'another good password' },
        vars,
      });
      expect(changed.res.status).toBe(200);
      const rows = await emailsTo(user.email);
      expect(rows.map((r) => [r.template, r.status, r.error])).toEqual([
        ['password_reset', 'failed', 'PUBLIC_BASE_URL is not set'],
        ['order_receipt', 'failed', 'PUBLIC_BASE_URL is not set'],
        ['password_changed', 'queued', null],
      ]);
      expect(changed.jobs).toEqual([{ email_id: rows[2].id }]);
    });
  }
});
