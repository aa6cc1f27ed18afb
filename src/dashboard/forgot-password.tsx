import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { clientIp, enforceRateLimit } from '../middleware/rate-limit';
import { mailFor } from '../middleware/send-emails';
import { ForgotPasswordBody } from '../schemas/auth';
import { FORGOT_PASSWORD_ANSWER, requestPasswordReset } from '../services/accounts/forgot-password';
import { readMailSettings } from '../services/mail/settings';
import { Alert, Field, Notice } from './components';
import { formHandler, parseForm, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';

// "Forgot password?" (POST /api/v2/auth/forgot-password's twin): the same page and sentence whether or not the
// account exists. Without email the page says to ask the shop's operator, who can make a reset link.

interface ForgotView {
  sent?: boolean;
  values?: FormFields;
  problem?: FormProblem;
}

function forgotPage(c: Context<AppEnv>, { sent, values, problem }: ForgotView, status: 200 | 202 | FormProblem['status'] = 200) {
  const mailOn = readMailSettings(c.env) !== null;
  return page(
    c,
    {
      title: 'Forgot password',
      children: (
        <div class="card narrow">
          {sent && <Notice>{FORGOT_PASSWORD_ANSWER}</Notice>}
          {mailOn ? (
            <>
              <Alert problem={problem} />
              <form method="post" action="/dashboard/forgot-password">
                <Field name="email" label="Email" type="email" value={values?.email} problem={problem} autocomplete="username" required />
                <button type="submit">Send reset link</button>
              </form>
            </>
          ) : (
            <p>This shop does not send email. Ask the shop's operator for a password reset link.</p>
          )}
          <p>
            <a href="/dashboard/sign-in">Back to sign in</a>
          </p>
        </div>
      ),
    },
    status,
  );
}

export const forgotPasswordPages = new Hono<AppEnv>()
  .get('/forgot-password', (c) => forgotPage(c, {}))
  .post(
    '/forgot-password',
    sameOriginForm,
    formHandler(
      async (c, fields) => {
        await enforceRateLimit(c.env.FORGOT_PASSWORD_IP_RATE_LIMITER, `ip:${clientIp(c)}`);
        const { email } = parseForm(ForgotPasswordBody, fields);
        await requestPasswordReset(c.var.db, email, mailFor(c));
        return forgotPage(c, { sent: true });
      },
      (c, fields, problem) => forgotPage(c, { values: fields, problem }, problem.status),
    ),
  );
