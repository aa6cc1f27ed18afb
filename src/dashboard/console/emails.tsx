import { Hono } from 'hono';
import { EMAIL_TEMPLATES } from '../../db/schema';
import type { AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { EMAIL_STATUSES, EmailsQuery } from '../../schemas/emails';
import { queryAsOperator } from '../../services/caller';
import { emailsQuery } from '../../services/operator-emails';
import { Pager, When } from '../components';
import { parseForm } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Emails (GET /admin/emails): every message the shop recorded, newest first, with its status and, when it failed,
// why. No body and no link is stored, so none is shown.

const EMAILS = '/dashboard/console/emails';

function Choice({ name, label, options, value }: { name: string; label: string; options: readonly string[]; value?: string }) {
  return (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      <select id={`filter-${name}`} name={name}>
        <option value="">Any</option>
        {options.map((option) => (
          <option value={option} selected={option === value}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

export const consoleEmails = new Hono<AppEnv>().get('/console/emails', requireOperatorSession, async (c) => {
  // The filter form sends every field; an empty one ("Any") is no filter.
  const filter = parseForm(EmailsQuery, Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== '')));
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [emailsQuery(filter)]);
  return page(c, {
    title: 'Emails',
    section: EMAILS,
    children: (
      <>
        <form method="get" action={EMAILS} class="search" role="search">
          <div class="field">
            <label for="filter-to">To</label>
            <input id="filter-to" name="to" type="email" value={filter.to} maxlength={254} />
          </div>
          <Choice name="template" label="Template" options={EMAIL_TEMPLATES} value={filter.template} />
          <Choice name="status" label="Status" options={EMAIL_STATUSES} value={filter.status} />
          <button type="submit">Filter</button>
        </form>
        <DataTable
          caption="Emails"
          rows={rows}
          empty="No email yet."
          columns={[
            { label: 'When', cell: (e) => <When iso={e.createdAt} /> },
            { label: 'To', cell: (e) => e.toAddress },
            { label: 'Template', cell: (e) => e.template },
            { label: 'Subject', cell: (e) => e.subject },
            { label: 'Status', cell: (e) => e.status },
            { label: 'Attempts', cell: (e) => String(e.attempts) },
            { label: 'Error', cell: (e) => e.error ?? '' },
          ]}
        />
        <Pager path={EMAILS} page={filter.page} totalPages={Math.ceil(total / filter.per_page)} query={{ to: filter.to, template: filter.template, status: filter.status }} />
      </>
    ),
  });
});
