import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { emailChangeThrottle, passwordCheckThrottle } from '../middleware/rate-limit';
import { mailFor } from '../middleware/send-emails';
import { currentSessionHash, requireSession } from '../middleware/session';
import { ChangePasswordBody, UpdateProfileBody } from '../schemas/users';
import { BillingBody } from '../schemas/documents';
import { changePassword, profileQuery, updateProfile } from '../services/accounts/users';
import { queryAs } from '../services/caller';
import { billingFromBody, billingQuery, updateBilling } from '../services/documents/settings';
import { Alert, Checkbox, Field, TextArea, When } from './components';
import { formHandler, parseForm, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { withDone } from './done-notices';
import { page } from './layout';

// Profile and password: PUT /user/profile and POST /user/password, through the same service functions. Changing the
// password here keeps this session and ends every other one (the API's route ends them all).

interface ProfileView {
  form?: 'profile' | 'password' | 'billing';
  values?: FormFields;
  problem?: FormProblem;
}

async function profilePage(c: Context<AppEnv>, { form, values, problem }: ProfileView, status: 200 | FormProblem['status'] = 200) {
  const [profile, billing] = await queryAs(c.var.db, c.var.caller, [profileQuery(c.var.caller), billingQuery(c.var.caller)]);
  const profileProblem = form === 'profile' ? problem : undefined;
  const billingProblem = form === 'billing' ? problem : undefined;
  const billingShown =
    form === 'billing' && values
      ? values
      : { name: billing.name, company: billing.company ?? '', address: billing.address.join('\n'), country: billing.country ?? '', vat_id: billing.vatId ?? '' };
  const passwordProblem = form === 'password' ? problem : undefined;
  const shown = form === 'profile' && values ? values : { name: profile.name, email: profile.email, email_receipts: profile.emailReceipts ? 'on' : '' };
  return page(
    c,
    {
      title: 'Profile',
      section: '/dashboard/profile',
      children: (
        <>
          <section class="card narrow" aria-labelledby="profile-heading">
            <h2 id="profile-heading">Your details</h2>
            <p class="muted">
              Member since <When iso={profile.createdAt} />
            </p>
            {profile.emailVerified === 0 && (
              <form method="post" action="/dashboard/verify-email/resend">
                <p class="notice" role="status">
                  Your email address is not confirmed yet: open the link we emailed you to add funds and buy.
                </p>
                <button type="submit">Resend verification email</button>
              </form>
            )}
            <Alert problem={profileProblem} />
            <form method="post" action="/dashboard/profile">
              <Field name="name" label="Name" value={shown.name} problem={profileProblem} autocomplete="name" required maxlength={100} />
              <Field name="email" label="Email" type="email" value={shown.email} problem={profileProblem} autocomplete="email" required />
              <p class="muted">Changing your email? Enter your current password too.</p>
              <Field name="current_password" label="Current password" type="password" idPrefix="profile" problem={profileProblem} autocomplete="current-password" />
              <Checkbox name="email_receipts" label="Email me receipts" checked={shown.email_receipts === 'on'} />
              <button type="submit">Save profile</button>
            </form>
          </section>
          <section class="card narrow" aria-labelledby="billing-heading">
            <h2 id="billing-heading">Billing details</h2>
            <p class="muted">
              Named on your invoices, receipts and credit notes from now on (documents already issued keep the details of their day). A
              VAT id in another country than the shop's means reverse charge.
            </p>
            <Alert problem={billingProblem} />
            <form method="post" action="/dashboard/billing">
              <Field name="name" label="Name" idPrefix="billing" value={billingShown.name} problem={billingProblem} autocomplete="name" required maxlength={200} />
              <Field name="company" label="Company (optional)" idPrefix="billing" value={billingShown.company} problem={billingProblem} autocomplete="organization" maxlength={200} />
              <TextArea name="address" label="Address (one line each, at most 6)" idPrefix="billing" rows={4} value={billingShown.address} problem={billingProblem} />
              <Field name="country" label="Country (ISO code, e.g. DE)" idPrefix="billing" value={billingShown.country} problem={billingProblem} maxlength={2} />
              <Field name="vat_id" label="VAT id (optional)" idPrefix="billing" value={billingShown.vat_id} problem={billingProblem} maxlength={50} />
              <button type="submit">Save billing details</button>
            </form>
          </section>
          <section class="card narrow" aria-labelledby="password-heading">
            <h2 id="password-heading">Change password</h2>
            <p class="muted">Your other signed-in browsers are signed out; this one stays signed in.</p>
            <Alert problem={passwordProblem} />
            <form method="post" action="/dashboard/password">
              <Field name="current_password" label="Current password" type="password" problem={passwordProblem} autocomplete="current-password" required />
              <Field name="new_password" label="New password" type="password" problem={passwordProblem} autocomplete="new-password" required />
              <Field
                name="new_password_confirmation"
                label="Confirm password"
                type="password"
                problem={passwordProblem}
                autocomplete="new-password"
                required
              />
              <button type="submit">Change password</button>
            </form>
          </section>
        </>
      ),
    },
    status,
  );
}

export const profilePages = new Hono<AppEnv>()
  .get('/profile', requireSession, (c) => profilePage(c, {}))
  .post(
    '/profile',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        // The checkbox is posted as "on" when ticked and not at all otherwise.
        const { email_receipts, ...details } = fields;
        const changes = { ...parseForm(UpdateProfileBody, details), email_receipts: email_receipts === 'on' };
        await updateProfile(c.var.db, c.var.caller, changes, { emailChange: emailChangeThrottle(c), passwordCheck: passwordCheckThrottle(c) }, mailFor(c));
        return c.redirect(withDone('/dashboard/profile', 'profile_saved'), 303);
      },
      (c, fields, problem) => profilePage(c, { form: 'profile', values: fields, problem }, problem.status),
    ),
  )
  .post(
    '/billing',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const blankIsNull = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value);
        const address = (fields.address ?? '').split(/\r?\n/).filter((line) => line.trim() !== '');
        const country = blankIsNull(fields.country)?.trim().toUpperCase() ?? null;
        const body = parseForm(BillingBody, { name: fields.name, company: blankIsNull(fields.company), address, country, vat_id: blankIsNull(fields.vat_id) });
        await updateBilling(c.var.db, c.var.caller, billingFromBody(body));
        return c.redirect(withDone('/dashboard/profile', 'billing_saved'), 303);
      },
      (c, fields, problem) => profilePage(c, { form: 'billing', values: fields, problem }, problem.status),
    ),
  )
  .post(
    '/password',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(ChangePasswordBody, fields);
        const change = { current: body.current_password, next: body.new_password, keepSession: await currentSessionHash(c) };
        await changePassword(c.var.db, c.var.caller, change, passwordCheckThrottle(c), mailFor(c));
        return c.redirect(withDone('/dashboard/profile', 'password_changed'), 303);
      },
      (c, _fields, problem) => profilePage(c, { form: 'password', problem }, problem.status),
    ),
  );
