import { Hono, type Context } from 'hono';
import { BLOCK_TYPES } from '../../db/schema';
import type { AppEnv } from '../../env';
import { PaginationQuery } from '../../lib/pagination';
import { requireOperatorSession } from '../../middleware/session';
import { BlockRuleBody } from '../../schemas/after-sale';
import { addRule, blocklistQuery, removeRule } from '../../services/accounts/blocklist';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { Alert, Field, Pager, Select, When } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// The blocklist: sign-ups, deposits and purchases matching a rule are refused (403 BLOCKED, a neutral sentence).

const BLOCKLIST = '/dashboard/console/blocklist';

const TYPE_LABELS: Record<(typeof BLOCK_TYPES)[number], string> = {
  email: 'Email address',
  email_domain: 'Email domain',
  ip: 'IP address or range (CIDR)',
  country: 'Country (ISO code)',
  asn: 'Network (AS number)',
};

async function blocklistPage(c: Context<AppEnv>, values: FormFields = { type: 'email' }, problem?: FormProblem) {
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [blocklistQuery(pageQuery)]);
  return page(
    c,
    {
      title: 'Blocklist',
      section: BLOCKLIST,
      children: (
        <>
          <section class="card narrow" aria-labelledby="new-rule">
            <h2 id="new-rule">Add a rule</h2>
            <Alert problem={problem} />
            <form method="post" action={BLOCKLIST}>
              <Select name="type" label="Type" value={values.type} problem={problem} options={BLOCK_TYPES.map((t) => ({ value: t, label: TYPE_LABELS[t] }))} />
              <Field name="value" label="Value" value={values.value} problem={problem} required maxlength={254} />
              <p class="muted">e.g. fraud@example.com, example.com, 203.0.113.0/24 or 2001:db8::/32, BE, 64512.</p>
              <Field name="note" label="Note" value={values.note} problem={problem} maxlength={200} />
              <button type="submit">Add rule</button>
            </form>
            <p class="muted">A matching sign-up, deposit or purchase is refused with "This cannot be done from this account or place. Contact the shop."</p>
          </section>
          <DataTable
            caption="Rules, newest first"
            rows={rows}
            empty="No rules."
            columns={[
              { label: 'Type', cell: (r) => TYPE_LABELS[r.type] },
              { label: 'Value', cell: (r) => <code>{r.value}</code> },
              { label: 'Note', cell: (r) => r.note ?? '' },
              { label: 'Hits', class: 'num', cell: (r) => r.hits },
              { label: 'Last hit', cell: (r) => (r.lastHitAt ? <When iso={r.lastHitAt} /> : 'never') },
              {
                label: '',
                cell: (r) => (
                  <form method="post" action={`${BLOCKLIST}/${r.id}/remove`} class="inline">
                    <button type="submit" class="secondary">
                      Remove
                    </button>
                  </form>
                ),
              },
            ]}
          />
          <Pager path={BLOCKLIST} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

export const consoleBlocklist = new Hono<AppEnv>()
  .get('/console/blocklist', requireOperatorSession, (c) => blocklistPage(c))
  .post(
    '/console/blocklist',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const note = (fields.note ?? '').trim();
        const body = parseForm(BlockRuleBody, { type: fields.type, value: fields.value, note: note === '' ? null : note });
        await addRule(c.var.db, operatorActor(c.var.caller), { type: body.type, value: body.value, note: body.note ?? null });
        return c.redirect(withDone(BLOCKLIST, 'rule_added'), 303);
      },
      (c, fields, problem) => blocklistPage(c, fields, problem),
    ),
  )
  .post('/console/blocklist/:id/remove', sameOriginForm, requireOperatorSession, async (c) => {
    await removeRule(c.var.db, operatorActor(c.var.caller), idFromPath(c.req.param('id'), 'Rule'));
    return c.redirect(withDone(BLOCKLIST, 'rule_removed'), 303);
  });
