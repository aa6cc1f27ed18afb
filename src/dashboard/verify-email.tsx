import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { notFound } from '../lib/errors';
import { mailFor } from '../middleware/send-emails';
import { requireSession } from '../middleware/session';
import { resendVerification, verifyEmail } from '../services/accounts/email-verification';
import { sameOriginForm } from './forms';
import { page } from './layout';

// EMAIL_VERIFICATION=required: the link of an email_verification message (the token in the path is the credential,
// no session needed), and the profile's "Resend verification email" (3 an hour; more are silently not sent).

export const verifyEmailPages = new Hono<AppEnv>()
  .get('/verify-email/:token', async (c) => {
    if (!(await verifyEmail(c.var.db, c.req.param('token')))) throw notFound('Page');
    return page(c, {
      title: 'Email address confirmed',
      children: (
        <div class="card narrow">
          <p>Your email address is confirmed: you can now add funds and buy.</p>
          <p>
            <a href="/dashboard">Go to the dashboard</a>
          </p>
        </div>
      ),
    });
  })
  .post('/verify-email/resend', sameOriginForm, requireSession, async (c) => {
    await resendVerification(c.var.db, c.var.caller, mailFor(c));
    return c.redirect('/dashboard/profile', 303);
  });
