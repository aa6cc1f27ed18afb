import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { visit } from '../dashboard-helpers';
import { callWithQueue, consumeEmails, recordingMailer } from '../email-helpers';
import { newUser } from '../helpers';

// EMAIL_PREVIEW=true (`npm run dev` only): the queue consumer keeps each sent email's text and HTML, and the console's
// Emails page opens them. Off (production, and every other test): no body is stored, nothing to open.

async function resetEmail(preview: 'true' | 'false') {
  const user = await newUser();
  const { res, jobs } = await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
  expect(res.status).toBe(202);
  const recorder = recordingMailer();
  await consumeEmails(jobs, { EMAIL: recorder.mailer, EMAIL_PREVIEW: preview });
  expect(recorder.sent).toHaveLength(1);
  const row = await env.DB.prepare("SELECT id FROM emails WHERE to_address = ? AND template = 'password_reset'").bind(user.email).first<{ id: string }>();
  return { user, sent: recorder.sent[0], emailId: row!.id };
}

describe('EMAIL_PREVIEW', () => {
  it('on: the Emails page opens the sent email, its reset link clickable, its text as sent', async () => {
    const { cookie } = await newOperator();
    const { user, sent, emailId } = await resetEmail('true');
    const list = await visit(`/dashboard/console/emails?to=${encodeURIComponent(user.email)}`, { cookie });
    expect(list.text).toContain(`<a href="/dashboard/console/emails/${emailId}"`);
    const opened = await visit(`/dashboard/console/emails/${emailId}`, { cookie });
    expect(opened.status).toBe(200);
    const link = /http:\/\/localhost\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}/.exec(sent.text)![0];
    expect(opened.text).toContain(`<a href="${link}">`);
    expect(opened.text).toContain(`${link}`);
    expect(opened.text).toContain('<h2 id="email-text">Text</h2>');
  });

  it('off: no body is stored and none can be opened', async () => {
    const { cookie } = await newOperator();
    const { user, emailId } = await resetEmail('false');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM email_previews WHERE email_id = ?').bind(emailId).first<{ n: number }>()).toEqual({ n: 0 });
    const list = await visit(`/dashboard/console/emails?to=${encodeURIComponent(user.email)}`, { cookie });
    expect(list.text).not.toContain(`/dashboard/console/emails/${emailId}"`);
    const opened = await visit(`/dashboard/console/emails/${emailId}`, { cookie });
    expect(opened.text).toContain('No copy of this email was kept');
    expect(opened.text).not.toContain('reset-password/');
  });

  it("an operator alert's email (its id carries the kind and the operator) opens too", async () => {
    const { cookie, id } = await newOperator();
    const alertId = `eml_${'A'.repeat(24)}_low_stock_${id}`;
    const { user } = await resetEmail('false');
    await env.DB.prepare("INSERT INTO emails (id, to_address, user_id, template, subject, data, created_at) VALUES (?, ?, ?, 'operator_alert', 'Alert', '{}', ?)")
      .bind(alertId, user.email, user.id, new Date().toISOString())
      .run();
    const opened = await visit(`/dashboard/console/emails/${alertId}`, { cookie });
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('No copy of this email was kept');
  });

  it('an unknown or malformed id is a 404; a non-operator gets 404 too', async () => {
    const { cookie } = await newOperator();
    expect((await visit('/dashboard/console/emails/eml_000000000000000000000000', { cookie })).status).toBe(404);
    expect((await visit('/dashboard/console/emails/nope', { cookie })).status).toBe(404);
    const { emailId } = await resetEmail('true');
    const buyer = await newUser();
    const { signIn } = await import('../dashboard-helpers');
    expect((await visit(`/dashboard/console/emails/${emailId}`, { cookie: await signIn(buyer.email) })).status).toBe(404);
  });
});
