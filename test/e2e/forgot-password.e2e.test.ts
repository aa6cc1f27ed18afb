import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, PHONE } from './browser';
import { contractFetch } from './checked-fetch';

// "Forgot password?" in Chromium with JavaScript off, as a buyer who forgot it: the sign-in page's link, the email
// field, the reset email as `npm run dev` prints it (wrangler dev simulates the Email Service binding: each message's
// headers in the terminal, its text in a file named there), the link from that message, a new password, signed in.

/** The text of the newest simulated message to `to` with `subject`, once wrangler dev has printed it. */
async function simulatedEmail(logFile: string, to: string, subject: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const log = readFileSync(logFile, 'utf8');
    const messages = [...log.matchAll(/To: (.+)\nSubject: (.+)\n\nText: (.+\.txt)/g)].filter(([, t, s]) => t === to && s === subject);
    if (messages.length > 0) return readFileSync(messages.at(-1)![3], 'utf8');
    if (Date.now() > deadline) throw new Error(`no email to ${to} printed:\n${log.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.runIf(browserAvailable)('forgot password in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const browser = useBrowser();


  it('sign-in → Forgot password? → the emailed link → a new password → signed in', async () => {
    const email = `forgetful-${Date.now()}@example.com`;
    const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Forgetful Fay', email, password: 'the old password' }) });
    expect(created.status).toBe(201);

    const context = await browser().newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));

    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => page.getByText('If an account exists for that address, a reset link is on its way.').isVisible()).toBe(true);

    const text = await simulatedEmail(server.logFile, email, 'Stock Wallet: reset your password');
    const link = /http:\/\/localhost:\d+\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}/.exec(text)?.[0];
    expect(link, text).toBeDefined();

    await page.goto(link!);
    await page.getByLabel('New password').fill('a new password 42');
    await page.getByLabel('Confirm password').fill('a new password 42');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.waitForURL(/\/dashboard\/sign-in/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a new password 42');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard`);
    await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);

    // The password_changed notice followed; the link was used once.
    await simulatedEmail(server.logFile, email, 'Stock Wallet: your password was changed');
    expect(errors).toEqual([]);
    expect((await page.goto(link!))?.status()).toBe(404);
    await context.close();
  });
});
