import { Hono, type Context } from 'hono';
import { raw } from 'hono/html';
import { notFound } from '../../lib/errors';
import { emailPreviewQuery, htmlBodyOf } from '../../services/mail/previews';
import { EMAIL_TEMPLATES } from '../../db/schema';
import type { AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { EMAIL_STATUSES, EmailsQuery } from '../../schemas/emails';
import { queryAsOperator } from '../../services/caller';
import { emailsQuery } from '../../services/operator/emails';
import { Pager, When } from '../components';
import { parseForm } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Emails (GET /admin/emails): every message the shop recorded, newest first, with its status and, when it failed,
// why. No body and no link is stored, so none is shown; locally (EMAIL_PREVIEW=true, set by `npm run dev` only) each
// sent email's text and HTML are kept, and "Open" shows them (src/services/mail/previews.ts).

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

/** `eml_` and 24 base62 characters; an operator alert's adds `_<kind>_<operator id>`. */
const EMAIL_ID = /^eml_[A-Za-z0-9]{24}(_[a-z_]{1,40}_\d{1,15})?$/;

/** One email's kept text and HTML (a 404 for an unknown id); the HTML is our own escaped template, shown in place. */
async function emailPage(c: Context<AppEnv>) {
  const id = c.req.param('email_id') ?? '';
  if (!EMAIL_ID.test(id)) throw notFound('Email');
  const [{ email, text, html }] = await queryAsOperator(c.var.db, c.var.caller, [emailPreviewQuery(id)]);
  return page(c, {
    title: email.subject,
    section: EMAILS,
    children: (
      <>
        <dl class="facts">
          <dt>To</dt>
          <dd>{email.to}</dd>
          <dt>Template</dt>
          <dd>{email.template}</dd>
          <dt>Status</dt>
          <dd>{email.status}</dd>
          <dt>Sent</dt>
          <dd>{email.sentAt ? <When iso={email.sentAt} /> : 'not yet'}</dd>
        </dl>
        {text === null || html === null ? (
          <p class="empty">No copy of this email was kept: bodies are kept only locally, with EMAIL_PREVIEW=true (npm run dev), once sent.</p>
        ) : (
          <>
            <section class="card" aria-labelledby="email-html">
              <h2 id="email-html">HTML</h2>
              <div class="email-html">{raw(htmlBodyOf(html))}</div>
            </section>
            <section class="card" aria-labelledby="email-text">
              <h2 id="email-text">Text</h2>
              <pre class="email-text">{text}</pre>
            </section>
          </>
        )}
        <p>
          <a href={EMAILS}>All emails</a>
        </p>
      </>
    ),
  });
}

export const consoleEmails = new Hono<AppEnv>().get('/console/emails/:email_id', requireOperatorSession, emailPage).get('/console/emails', requireOperatorSession, async (c) => {
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
            { label: 'Preview', cell: (e) => (e.hasPreview === 1 ? <a href={`${EMAILS}/${encodeURIComponent(e.id)}`} aria-label={`Open ${e.subject}`}>Open</a> : '') },
          ]}
        />
        <Pager path={EMAILS} page={filter.page} totalPages={Math.ceil(total / filter.per_page)} query={{ to: filter.to, template: filter.template, status: filter.status }} />
      </>
    ),
  });
});
