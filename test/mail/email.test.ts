import { createExecutionContext, env } from 'cloudflare:test';
import { createApp } from '../../src/app';
import { describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { ORIGIN, PASSWORD, freshIp, signIn, visit } from '../dashboard-helpers';
import { call, expectError, newProduct, newUser, newDeposit, unique, type TestUser, setStockCount } from '../helpers';
import { callWithQueue, consumeEmails, emailsTo, everyStoredText, recordingMailer, recordingQueue, send } from '../email-helpers';

// Email through the outbox: recorded in the batch of its effect (none for a refused or rolled-back one), enqueued
// after the response, sent by the queue consumer with a recording stand-in for EMAIL, retried, then failed.

describe('order_receipt', () => {
  it('a purchase records one receipt in its batch; the consumer sends it without the delivered items', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2.5, stock: 3 });
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 2 } });
    expect(res.status, res.text).toBe(201);
    const [row] = await emailsTo(user.email);
    expect(row).toMatchObject({ template: 'order_receipt', status: 'queued', attempts: 0 });
    expect(row.enqueued_at).not.toBeNull();
    expect(jobs).toEqual([{ email_id: row.id }]);

    const { sent, explicitAcks } = await send(jobs);
    expect(explicitAcks).toEqual(['email-0']);
    expect(sent).toHaveLength(1);
    const [message] = sent;
    expect(message).toMatchObject({ from: 'Test Shop <shop@example.com>', to: user.email });
    expect(message.subject).toContain(res.json.data.order_number);
    expect(message.text).toContain('Total: $5.00');
    expect(message.text).toContain('Balance after: $5.00');
    expect(message.text).toContain(`http://localhost/dashboard/orders/${res.json.data.id}`);
    expect(message.text).toContain('Test Shop');
    for (const item of res.json.data.stock_items as string[]) {
      expect(message.text).not.toContain(item);
      expect(message.html).not.toContain(item);
      expect(row.data).not.toContain(item);
    }
    expect(message.html).not.toMatch(/<img|<script/i);
    expect((await emailsTo(user.email))[0]).toMatchObject({ status: 'sent', attempts: 1, message_id: '<msg-1@example.com>' });
  });

  it('a refused purchase (4xx) records and enqueues nothing', async () => {
    const user = await newUser({ balance: 1 });
    const product = await newProduct({ price: 2.5, stock: 3 });
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expectError(res, 400, 'INSUFFICIENT_BALANCE');
    expect(jobs).toEqual([]);
    expect(await emailsTo(user.email)).toEqual([]);
  });

  it('a purchase rolled back inside its batch (a short claim of items) records nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    // stock_count says 2 while one item exists: the claim of 2 comes up short and the orders CHECK rolls back all.
    await setStockCount(product.id, 2);
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 2 } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(jobs).toEqual([]);
    expect(await emailsTo(user.email)).toEqual([]);
  });

  it('is not sent to a user who turned receipts off; GET /user/profile shows the choice', async () => {
    const user = await newUser({ balance: 10 });
    const off = await call('/user/profile', { key: user.key, method: 'PUT', body: { email_receipts: false } });
    expect(off.status, off.text).toBe(200);
    expect(off.json.data).toMatchObject({ email_receipts: false, email_verified: true });
    expect((await call('/user/profile', { key: user.key })).json.data).toMatchObject({ email_receipts: false, email_verified: true });
    const product = await newProduct({ price: 1, stock: 1 });
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expect(res.status, res.text).toBe(201);
    expect(jobs).toEqual([]);
    expect(await emailsTo(user.email)).toEqual([]);
  });

  it('the dashboard profile: "Email me receipts" is ticked by default, and unticking it turns receipts off', async () => {
    const user = await newUser();
    const cookie = await signIn(user.email);
    const page = await visit('/dashboard/profile', { cookie });
    expect(page.text).toMatch(/<input id="field-email_receipts" name="email_receipts" type="checkbox" checked/);
    expect(page.text).toContain('Email me receipts');
    const saved = await visit('/dashboard/profile', { cookie, form: { name: 'Test User', email: user.email } });
    expect(saved.status).toBe(303);
    expect((await call('/user/profile', { key: user.key })).json.data.email_receipts).toBe(false);
    await visit('/dashboard/profile', { cookie, form: { name: 'Test User', email: user.email, email_receipts: 'on' } });
    expect((await call('/user/profile', { key: user.key })).json.data.email_receipts).toBe(true);
  });

  it('mail off (no EMAIL_FROM): nothing is recorded and the purchase is the same', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, vars: { EMAIL_FROM: '' } });
    expect(res.status, res.text).toBe(201);
    expect(jobs).toEqual([]);
    expect(await emailsTo(user.email)).toEqual([]);
  });
});

describe('security notices', () => {
  it('password_changed after POST /user/password; nothing for a refused change', async () => {
    const user = await newUser();
    const wrong = await callWithQueue('/user/password', {
      key: user.key,
      body: { current_password: 'not the password', new_password: 'a brand new secret', new_password_confirmation: 'a brand new secret' },
    });
    expectError(wrong.res, 422, 'VALIDATION_FAILED');
    expect(await emailsTo(user.email)).toEqual([]);
    const { res, jobs } = await callWithQueue('/user/password', {
      key: user.key,
      body: { current_password: PASSWORD, new_password: 'a brand new secret', new_password_confirmation: 'a brand new secret' },
    });
    expect(res.status, res.text).toBe(200);
    const [row] = await emailsTo(user.email);
    expect(row.template).toBe('password_changed');
    const { sent } = await send(jobs);
    expect(sent.map((m) => [m.to, m.subject])).toEqual([[user.email, 'Test Shop: your password was changed']]);
  });

  it('email_changed goes to the old address, the new one masked; a change to a taken address records nothing', async () => {
    const user = await newUser();
    const other = await newUser();
    const taken = await callWithQueue('/user/profile', { key: user.key, method: 'PUT', body: { email: other.email } });
    expectError(taken.res, 422, 'VALIDATION_FAILED');
    expect(await emailsTo(user.email)).toEqual([]);
    const sameInOtherCase = await callWithQueue('/user/profile', { key: user.key, method: 'PUT', body: { email: user.email.toUpperCase() } });
    expect(sameInOtherCase.res.status).toBe(200);
    expect(sameInOtherCase.jobs).toEqual([]);

    const newAddress = `${unique('moved')}@example.org`;
    const { res, jobs } = await callWithQueue('/user/profile', { key: user.key, method: 'PUT', body: { email: newAddress } });
    expect(res.status, res.text).toBe(200);
    const { sent } = await send(jobs);
    expect(sent).toHaveLength(1);
    expect(sent[0].to.toLowerCase()).toBe(user.email.toLowerCase());
    expect(sent[0].text).toContain(`${newAddress[0]}***@example.org`);
    expect(sent[0].text).not.toContain(newAddress);
    expect(sent[0].text).toContain('Not you? Contact the shop');
  });
});

describe('deposit_credited', () => {
  it('a deposit credited (the operator marks it paid) sends the amount and the balance after', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 12.34 });
    const { res, jobs } = await callWithQueue(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, method: 'POST' });
    expect(res.status, res.text).toBe(200);
    const again = await callWithQueue(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, method: 'POST' });
    expect(again.jobs).toEqual([]);
    expect(await emailsTo(user.email)).toHaveLength(1);
    const { sent } = await send(jobs);
    expect(sent).toHaveLength(1);
    expect(sent[0].text).toContain('$12.34 was credited');
    expect(sent[0].text).toContain('Balance after: $12.34');
  });
});

describe('sending', () => {
  it('a failing send is retried with backoff, then failed after 5 attempts; the order is untouched', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const { res, jobs } = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expect(res.status).toBe(201);
    const failing = recordingMailer({ failing: true });
    const delays = [];
    for (let attempt = 1; attempt <= 5; attempt++) delays.push(...(await consumeEmails(jobs, { EMAIL: failing.mailer })).retryDelays);
    expect(delays).toEqual([30, 60, 120, 240]);
    const [row] = await emailsTo(user.email);
    expect(row).toMatchObject({ status: 'failed', attempts: 5, error: 'Email Service refused the message' });
    // A sixth delivery of the message changes nothing and sends nothing.
    const late = await send(jobs);
    expect(late.sent).toEqual([]);
    const order = await call(`/orders/${res.json.data.id}`, { key: user.key });
    expect(order.json.data).toMatchObject({ status: 'pending', quantity: 1 });
  });

  it('the scheduled sweep enqueues an email whose enqueue was lost; a lost link is marked failed instead', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    // No queue binding: the request's enqueue is lost, the rows stay in the outbox.
    const bought = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, vars: { EMAIL_QUEUE: undefined as unknown as string } });
    expect(bought.status).toBe(201);
    const forgot = await call('/auth/forgot-password', { body: { email: user.email }, vars: { EMAIL_QUEUE: undefined as unknown as string } });
    expect(forgot.status).toBe(202);
    const rows = await emailsTo(user.email);
    expect(rows.map((r) => [r.template, r.enqueued_at])).toEqual([
      ['order_receipt', null],
      ['password_reset', null],
    ]);
    const swept = recordingQueue();
    await runScheduledJobs({ ...env, EMAIL_QUEUE: swept.queue } as never, Date.now() + 120_000);
    const receipt = rows.find((r) => r.template === 'order_receipt')!;
    // The receipt is enqueued again; the reset email is not (its link is gone), it is failed.
    expect(swept.jobs.filter((job) => rows.some((row) => row.id === job.email_id))).toEqual([{ email_id: receipt.id }]);
    const after = await emailsTo(user.email);
    expect(after.find((r) => r.template === 'password_reset')).toMatchObject({ status: 'failed', error: 'link not sent; request a new one' });
    expect(after.find((r) => r.template === 'order_receipt')).toMatchObject({ status: 'queued' });
    expect(after.every((r) => r.enqueued_at !== null)).toBe(true);
  });
});

describe('forgot password', () => {
  const ANSWER = 'If an account exists for that address, a reset link is on its way.';

  it('answers the same for a known and an unknown address; only the link of the known one opens a reset page, never stored', async () => {
    const user = await newUser();
    const known = await callWithQueue('/auth/forgot-password', { body: { email: user.email.toUpperCase() } });
    const unknown = await callWithQueue('/auth/forgot-password', { body: { email: `${unique('nobody')}@example.com` } });
    expect(known.res.status).toBe(202);
    expect(unknown.res.status).toBe(202);
    expect(known.res.text).toBe(unknown.res.text);
    expect(known.res.json).toEqual({ success: true, message: ANSWER });
    // One queue message either way (the same work after the answer): the unknown address's names no stored email, and
    // its link (of the same length) opens nothing.
    expect(unknown.jobs).toHaveLength(1);
    expect(unknown.jobs[0].link).toMatch(/^http:\/\/localhost\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/);
    expect(await env.DB.prepare('SELECT 1 FROM emails WHERE id = ?').bind(unknown.jobs[0].email_id).first()).toBeNull();
    expect(known.jobs).toHaveLength(1);
    const link = known.jobs[0].link!;
    expect(link).toMatch(/^http:\/\/localhost\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/);
    const token = link.split('/').pop()!;
    expect(await everyStoredText()).not.toContain(token);

    const { sent } = await send(known.jobs);
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe(user.email);
    expect(sent[0].text).toContain(link);
    expect(sent[0].html).toContain(`href="${link}"`);

    // The link sets a new password; the old one no longer signs in, the new one does.
    const path = new URL(link).pathname;
    const reset = await visit(path, { form: { new_password: 'reset by email', new_password_confirmation: 'reset by email' } });
    expect(reset.status).toBe(303);
    const refused = await visit('/dashboard/sign-in', { form: { email: user.email, password: PASSWORD } });
    expect(refused.status).toBe(401);
    expect(await signIn(user.email, 'reset by email')).toBeTruthy();
    const notices = await emailsTo(user.email);
    expect(notices.map((r) => r.template)).toEqual(['password_reset', 'password_changed']);
  });

  it('at most 3 reset emails an hour per address (more silently not sent); a malformed email is a 422', async () => {
    const user = await newUser();
    for (let i = 0; i < 5; i++) {
      const { res } = await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
      expect(res.status).toBe(202);
    }
    expect((await emailsTo(user.email)).filter((r) => r.template === 'password_reset')).toHaveLength(3);
    expectError(await call('/auth/forgot-password', { body: { email: 'not-an-email' } }), 422, 'VALIDATION_FAILED');
  });

  it('10 posts a minute per client IP: beyond, 429', async () => {
    const vars = { FORGOT_PASSWORD_IP_RATE_LIMITER: (env as unknown as { TINY_RATE_LIMITER: RateLimit }).TINY_RATE_LIMITER };
    const ip = freshIp();
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const res = await call('/auth/forgot-password', { body: { email: `${unique('x')}@example.com` }, headers: { 'CF-Connecting-IP': ip }, vars });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
  });

  it('the dashboard: a "Forgot password?" link on the sign-in page, the same sentence for any address', async () => {
    expect((await visit('/dashboard/sign-in')).text).toContain('href="/dashboard/forgot-password"');
    const form = await visit('/dashboard/forgot-password');
    expect(form.text).toContain('Send reset link');
    const user = await newUser();
    const known = await visit('/dashboard/forgot-password', { form: { email: user.email } });
    const unknown = await visit('/dashboard/forgot-password', { form: { email: `${unique('nobody')}@example.com` } });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.text).toContain(ANSWER);
    expect(known.text.replace(/\s+/g, ' ')).toBe(unknown.text.replace(/\s+/g, ' '));
    expect((await emailsTo(user.email)).map((r) => r.template)).toEqual(['password_reset']);
    // Mail off: the page says to ask the operator (the app itself, with the var changed; no API contract applies).
    const off = await (await createApp().request(`${ORIGIN}/dashboard/forgot-password`, {}, { ...env, EMAIL_FROM: '' }, createExecutionContext())).text();
    expect(off).toContain('Ask the shop&#39;s operator');
    expect(off).not.toContain('Send reset link');
  });
});

describe('GET /admin/emails', () => {
  it('lists the outbox newest first, filtered by to, template and status; malformed filters are 422', async () => {
    const user: TestUser = await newUser();
    await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
    const product = await newProduct({ price: 1, stock: 1 });
    await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 5, description: 'funds' } });
    await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    const all = await call(`/admin/emails?to=${encodeURIComponent(user.email.toUpperCase())}`, { admin: true });
    expect(all.status, all.text).toBe(200);
    expect(all.json.data.map((e: { template: string }) => e.template)).toEqual(['order_receipt', 'password_reset']);
    expect(Object.keys(all.json.data[0]).sort()).toEqual(
      ['attempts', 'created_at', 'error', 'id', 'message_id', 'sent_at', 'status', 'subject', 'template', 'to'].sort(),
    );
    const receipts = await call(`/admin/emails?to=${encodeURIComponent(user.email)}&template=order_receipt&status=queued`, { admin: true });
    expect(receipts.json.data).toHaveLength(1);
    expect(receipts.json.meta.total).toBe(1);
    expectError(await call('/admin/emails?status=lost', { admin: true }), 422, 'VALIDATION_FAILED');
    expectError(await call('/admin/emails'), 401, 'UNAUTHORIZED');
  });
});

describe('EMAIL_VERIFICATION=required', () => {
  const REQUIRED = { EMAIL_VERIFICATION: 'required' };

  it('an unverified user can read but not deposit or buy (403 EMAIL_NOT_VERIFIED, nothing created); the link verifies', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    await env.DB.prepare('UPDATE users SET email_verified = 0 WHERE id = ?').bind(user.id).run();
    expect((await call('/user/profile', { key: user.key, vars: REQUIRED })).json.data.email_verified).toBe(false);
    const buy = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, vars: REQUIRED });
    expectError(buy, 403, 'EMAIL_NOT_VERIFIED');
    const deposit = await call('/wallet/deposit', { key: user.key, body: { amount: 5, gateway: 'gateway_one' }, vars: REQUIRED });
    expectError(deposit, 403, 'EMAIL_NOT_VERIFIED');
    expect((await call('/orders', { key: user.key })).json.data).toEqual([]);
    expect((await call('/wallet/deposits', { key: user.key })).json.data).toEqual([]);
    expect((await call('/wallet/balance', { key: user.key })).json.data.balance).toBe(10);
    // With the setting off, the same user buys.
    expect((await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } })).status).toBe(201);

    // The profile's "Resend verification email": a link by email (3 an hour), which verifies the address once.
    const cookie = await signIn(user.email);
    const recorded = recordingQueue();
    const vars = { ...REQUIRED, EMAIL_QUEUE: recorded.queue } as unknown as Record<string, string>;
    expect((await visit('/dashboard/profile', { cookie, vars })).text).toContain('Resend verification email');
    for (let i = 0; i < 4; i++) expect((await visit('/dashboard/verify-email/resend', { cookie, form: {}, vars })).status).toBe(303);
    expect(recorded.jobs).toHaveLength(3);
    const { sent } = await send(recorded.jobs.slice(0, 1));
    const link = recorded.jobs[0].link!;
    expect(sent[0].text).toContain(link);
    expect(await everyStoredText()).not.toContain(link.split('/').pop()!);
    expect((await visit(new URL(link).pathname, { vars })).status).toBe(200);
    expect((await visit(new URL(link).pathname, { vars })).status).toBe(404);
    expect((await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, vars: REQUIRED })).status).toBe(201);
  });

  it('the dashboard: Buy and Add funds answer a 403 page that says why; nothing is created', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    await env.DB.prepare('UPDATE users SET email_verified = 0 WHERE id = ?').bind(user.id).run();
    const cookie = await signIn(user.email);
    const vars = REQUIRED as Record<string, string>;
    const bought = await visit('/dashboard/shop', { cookie, form: { product_id: String(product.id), quantity: '1' }, vars });
    expect(bought.status).toBe(403);
    expect(bought.text).toContain('Confirm your email address first');
    const funded = await visit('/dashboard/wallet/deposit', { cookie, form: { amount: '10', gateway: 'gateway_one' }, vars });
    expect(funded.status).toBe(403);
    expect((await call('/orders', { key: user.key })).json.data).toEqual([]);
    expect((await call('/wallet/deposits', { key: user.key })).json.data).toEqual([]);
  });

  it('sign-up makes an unverified account with its email_verification; operator-made accounts are verified', async () => {
    const recorded = recordingQueue();
    const vars = { ...REQUIRED, EMAIL_QUEUE: recorded.queue } as unknown as Record<string, string>;
    const email = `${unique('signup')}@example.com`;
    const res = await visit('/dashboard/sign-up', { form: { name: 'New Buyer', email, password: PASSWORD, password_confirmation: PASSWORD }, vars });
    expect(res.status).toBe(303);
    const rows = await emailsTo(email);
    expect(rows.map((r) => r.template)).toEqual(['email_verification']);
    expect(recorded.jobs).toEqual([{ email_id: rows[0].id, link: expect.stringMatching(/\/dashboard\/verify-email\/[A-Za-z0-9_-]{43}$/) }]);
    const { results } = await env.DB.prepare('SELECT email_verified FROM users WHERE email = ?').bind(email).all<{ email_verified: number }>();
    expect(results).toEqual([{ email_verified: 0 }]);
    const byOperator = await newUser();
    expect((await call('/user/profile', { key: byOperator.key, vars: REQUIRED })).json.data.email_verified).toBe(true);
  });
});
