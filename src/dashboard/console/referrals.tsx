import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { centsToDecimal } from '../../lib/money';
import { PaginationQuery } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { requireOperatorSession } from '../../middleware/session';
import { ReferralSettingsBody } from '../../schemas/referrals';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { referrersQuery, setReferralsOn, type ReferrerRow } from '../../services/referrals/referrers';
import { settingsQuery, updateReferralSettings } from '../../services/referrals/settings';
import { userDetailQuery } from '../../services/operator/users';
import { Alert, Field, Money, Pager, Status } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, plainNumber, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { page } from '../layout';
import { DataTable, type Column } from '../tables';
import { AskFirst, confirmationPage } from './confirm';

// The referral programme in the console (docs/referrals.md): its settings (the admin API's PUT /admin/settings/
// referrals), the referrers with what each earned, and the switch that stops one (their held earnings reversed).

const REFERRALS = '/dashboard/console/referrals';
const offPath = (id: number) => `${REFERRALS}/users/${id}/off`;
const onPath = (id: number) => `${REFERRALS}/users/${id}/on`;

const REFERRER_COLUMNS: Column<ReferrerRow>[] = [
  { label: 'Referrer', cell: (r) => <a href={`/dashboard/console/users/${r.id}`}>{`${r.name} <${r.email}>`}</a> },
  { label: 'Code', cell: (r) => <code>{r.code}</code> },
  { label: 'Buyers brought', class: 'num', cell: (r) => String(r.referred) },
  { label: 'Pending', class: 'num', cell: (r) => <Money cents={r.pendingCents} /> },
  { label: 'Available', class: 'num', cell: (r) => <Money cents={r.availableCents} /> },
  { label: 'Moved to wallet', class: 'num', cell: (r) => <Money cents={r.transferredCents} /> },
  { label: 'Referrals', cell: (r) => <Status value={r.referralsOffAt ? 'off' : 'on'} /> },
  {
    label: 'Switch',
    labelHidden: true,
    class: 'actions',
    cell: (r) => (r.referralsOffAt ? <AskFirst action={onPath(r.id)} label="Switch on" /> : <AskFirst action={offPath(r.id)} label="Switch off" class="danger" />),
  },
];

async function referralsConsolePage(c: Context<AppEnv>, values?: FormFields, problem?: FormProblem) {
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const [settings, referrers] = await queryAsOperator(c.var.db, c.var.caller, [settingsQuery, referrersQuery(pageQuery, isoNow())]);
  const shown = values ?? { percent: String(settings.percent), hold_days: String(settings.holdDays), min_transfer: centsToDecimal(settings.minTransferCents) };
  return page(
    c,
    {
      title: 'Referrals',
      section: REFERRALS,
      children: (
        <>
          <section class="card narrow" aria-labelledby="settings-heading">
            <h2 id="settings-heading">Programme</h2>
            <Alert problem={problem} />
            <form method="post" action={`${REFERRALS}/settings`}>
              <Field name="percent" label="Percent of each order (0 = off)" value={shown.percent} problem={problem} inputmode="numeric" required />
              <Field name="hold_days" label="Hold (days)" value={shown.hold_days} problem={problem} inputmode="numeric" required />
              <Field name="min_transfer" label="Minimum transfer (USD)" value={shown.min_transfer} problem={problem} inputmode="decimal" required />
              <button type="submit">Save</button>
            </form>
            <p class="muted">
              An earning waits for the longest of the hold, the product's warranty and the order's hold period. A product's own percent (its page) wins over
              this one.
            </p>
          </section>
          <h2>Referrers</h2>
          <DataTable caption="Users who brought buyers, newest first" rows={referrers.rows} empty="Nobody has brought a buyer yet." columns={REFERRER_COLUMNS} />
          <Pager path={REFERRALS} page={pageQuery.page} totalPages={Math.ceil(referrers.total / pageQuery.per_page)} />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

const userId = (c: Context<AppEnv>) => idFromPath(c.req.param('id'), 'User');

export const consoleReferrals = new Hono<AppEnv>()
  .get('/console/referrals', requireOperatorSession, (c) => referralsConsolePage(c))
  .post(
    '/console/referrals/settings',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(ReferralSettingsBody, { ...fields, min_transfer: plainNumber(fields.min_transfer) }, ['percent', 'hold_days', 'min_transfer']);
        await updateReferralSettings(c.var.db, operatorActor(c.var.caller), { percent: body.percent, holdDays: body.hold_days, minTransferCents: body.min_transfer });
        return c.redirect(withDone(REFERRALS, 'referral_settings_saved'), 303);
      },
      (c, fields, problem) => referralsConsolePage(c, fields, problem),
    ),
  )
  .get('/console/referrals/users/:id/off/confirm', requireOperatorSession, async (c) => {
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(userId(c))]);
    return confirmationPage(c, {
      title: `Switch off ${user.name}'s referrals?`,
      section: REFERRALS,
      effect: `${user.name} <${user.email}> earns nothing more from the buyers they brought, and their earnings still held are reversed. What is already available stays theirs to move.`,
      action: offPath(user.id),
      back: REFERRALS,
      danger: true,
    });
  })
  .get('/console/referrals/users/:id/on/confirm', requireOperatorSession, async (c) => {
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(userId(c))]);
    return confirmationPage(c, {
      title: `Switch on ${user.name}'s referrals?`,
      section: REFERRALS,
      effect: `The next orders of the buyers ${user.name} brought earn again. Earnings reversed while off stay reversed.`,
      action: onPath(user.id),
      back: REFERRALS,
    });
  })
  .post('/console/referrals/users/:id/off', sameOriginForm, requireOperatorSession, async (c) => {
    await setReferralsOn(c.var.db, operatorActor(c.var.caller), userId(c), false);
    return c.redirect(withDone(REFERRALS, 'referrals_off'), 303);
  })
  .post('/console/referrals/users/:id/on', sameOriginForm, requireOperatorSession, async (c) => {
    await setReferralsOn(c.var.db, operatorActor(c.var.caller), userId(c), true);
    return c.redirect(withDone(REFERRALS, 'referrals_on'), 303);
  });
