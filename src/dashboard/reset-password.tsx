import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { mailFor } from '../middleware/send-emails';
import { notFound } from '../lib/errors';
import { ResetPasswordBody } from '../schemas/users';
import { resetLinkUsable, resetPassword } from '../services/accounts/password-resets';
import { Alert, Field } from './components';
import { formHandler, parseForm, sameOriginForm, type FormProblem } from './forms';
import { withDone } from './done-notices';
import { page } from './layout';

// A password reset link, made by an operator or sent by "Forgot password?" (src/services/accounts/password-resets.ts): no session, the token in the path is the
// credential. An unknown, used or expired link is a 404 page.

async function resetPage(c: Context<AppEnv>, problem?: FormProblem) {
  if (!(await resetLinkUsable(c.var.db, c.req.param('token') ?? ''))) throw notFound('Page');
  return page(
    c,
    {
      title: 'Set a new password',
      children: (
        <div class="card narrow">
          <Alert problem={problem} />
          <form method="post" action={new URL(c.req.url).pathname}>
            <Field name="new_password" label="New password" type="password" problem={problem} autocomplete="new-password" required />
            <Field name="new_password_confirmation" label="Confirm password" type="password" problem={problem} autocomplete="new-password" required />
            <button type="submit">Set password</button>
          </form>
        </div>
      ),
    },
    problem?.status ?? 200,
  );
}

export const resetPasswordPages = new Hono<AppEnv>()
  .get('/reset-password/:token', (c) => resetPage(c))
  .post(
    '/reset-password/:token',
    sameOriginForm,
    formHandler(
      async (c, fields) => {
        const { new_password } = parseForm(ResetPasswordBody, fields);
        await resetPassword(c.var.db, c.req.param('token') ?? '', new_password, mailFor(c));
        return c.redirect(withDone('/dashboard/sign-in', 'password_reset'), 303);
      },
      (c, _fields, problem) => resetPage(c, problem),
    ),
  );
