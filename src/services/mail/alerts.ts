import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { addMinutes } from '../../lib/time';
import { PUBLIC_BASE_URL_UNSET } from '../../lib/public-base-url';
import { newEmailId } from './outbox';
import { ALERT_KINDS, SUBJECTS, type AlertKind } from './templates';
import type { Mail, MailSettings } from './settings';

// Operator alerts: a fact is one `operator_alerts` line written in the batch of its cause (only while mail is on);
// the scheduled run turns each kind's unemailed lines into one operator_alert email per enabled operator, at most one
// per kind an hour: lines of the rest of that hour wait for the next one.

/** Lines quoted in one alert email; the email says how many there were in all. */
const LINES_PER_EMAIL = 50;

const alertLine = (kind: AlertKind, line: SQL, from: SQL, now: string) =>
  sql`INSERT INTO operator_alerts (kind, line, created_at) SELECT ${kind}, ${line}, ${now} ${from}`;

/**
 * In a purchase batch, after the stock decrement: the product crossed the threshold (stock before the purchase above
 * it, after at or below), so a crossing is reported once, and again only after a restock lifted it above.
 */
export function lowStockAlert(mail: Mail | undefined, productId: number, orderNumber: string, now: string): SQL[] {
  if (!mail) return [];
  const threshold = mail.settings.lowStockThreshold;
  return [
    alertLine(
      'low_stock',
      // Ends with the product's console page, where its stock is uploaded (a mail client makes the address a link).
      sql`'Product #' || p.id || ' ' || p.name || ': ' || p.stock_count || ${` left (threshold ${threshold}): ${mail.origin}/dashboard/console/products/`} || p.id`,
      sql`FROM products p JOIN orders o ON o.order_number = ${orderNumber}
          WHERE p.id = ${productId} AND p.stock_count <= ${threshold} AND p.stock_count + o.quantity > ${threshold}`,
      now,
    ),
  ];
}

/**
 * In a gateway event's batch: the logged event `reference`, when it was recorded as amount_mismatch or reversed, and
 * the deposit's log had no such event yet (a vendor repeating a notification is the same fact: one alert).
 */
export function paymentAlert(mail: Mail | undefined, reference: string, now: string): SQL[] {
  if (!mail) return [];
  return [
    alertLine(
      'payment',
      sql`'Deposit #' || g.deposit_id || ' via ' || g.gateway || ': ' || g.outcome || ' (reported ' || g.status || ', ' || printf('%.2f', g.amount_cents / 100.0) || ' USD)'`,
      sql`FROM gateway_events g WHERE g.reference = ${reference} AND g.outcome IN ('amount_mismatch', 'reversed')
            AND NOT EXISTS (SELECT 1 FROM gateway_events e WHERE e.deposit_id = g.deposit_id AND e.reference <> g.reference
                              AND e.outcome = g.outcome AND e.status = g.status AND e.transaction_id = g.transaction_id
                              AND e.amount_cents IS g.amount_cents)`,
      now,
    ),
  ];
}

/**
 * In a claim's batch: a buyer reported an item, so every enabled operator gets a `claim_opened` email now (a claim
 * waits on a person, unlike the hourly alerts of a kind): one INSERT over the operators, ids `<id>_<operator id>`
 * from one id generated here, none when the claim was not created. The buyer's name and email, the item as "Item 2 of
 * 3" and the reason; never the item itself.
 */
export function claimOpenedAlert(mail: Mail | undefined, reference: string, now: string) {
  if (!mail) return { writes: [] as SQL[], reads: [] as SQL[], sent: (_: D1Result | undefined) => {} };
  const prefix = newEmailId();
  const claimUrl = mail.origin === null ? null : `${mail.origin}/dashboard/console/claims/`;
  return {
    writes: [
      sql`INSERT INTO emails (id, to_address, user_id, template, subject, data, carries_link, status, error, created_at)
          SELECT ${prefix} || '_' || op.id, op.email, op.id, 'claim_opened', ${SUBJECTS.claim_opened(mail.settings.shopName, '')} || o.order_number,
                 json_object('name', op.name, 'buyer_name', b.name, 'buyer_email', b.email, 'order_number', o.order_number,
                             'product_name', o.product_name, 'item', c.item_index + 1, 'items', o.quantity, 'reason', c.reason,
                             'claim_url', ${claimUrl} || c.id),
                 0, ${claimUrl === null ? 'failed' : 'queued'}, ${claimUrl === null ? PUBLIC_BASE_URL_UNSET : null}, ${now}
          FROM claims c JOIN orders o ON o.id = c.order_id JOIN users b ON b.id = c.user_id
               JOIN users op ON op.role = 'operator' AND op.disabled_at IS NULL
          WHERE c.reference = ${reference}`,
    ],
    reads: [sql`SELECT id FROM emails WHERE id > ${prefix} || '_' AND id < ${prefix} || '_~' AND status = 'queued'`],
    sent: (result: D1Result | undefined) => mail.send(rowsOf<{ id: string }>(result).map(({ id }) => ({ email_id: id }))),
  };
}

/** After a delivery run: endpoints whose event exhausted its attempts (one line each). */
export async function recordWebhookAlerts(d1: Db, settings: MailSettings | null, endpoints: Array<{ endpointId: number; eventId: string }>, now: string) {
  if (!settings || endpoints.length === 0) return;
  await runBatch(
    d1,
    endpoints.map(({ endpointId, eventId }) =>
      alertLine(
        'webhook_endpoint',
        sql`'Endpoint #' || w.id || ' (' || w.url || ') of user #' || w.user_id || ' gave up on event ' || ${eventId}`,
        sql`FROM webhook_endpoints w WHERE w.id = ${endpointId}`,
        now,
      ),
    ),
  );
}

/**
 * Scheduled: for each kind with unemailed lines and no email in the last hour, one email per enabled operator (ids
 * generated here), then those lines marked emailed. Two statements.
 */
export async function emailAlerts(d1: Db, settings: MailSettings | null, now: string): Promise<void> {
  if (!settings) return;
  const hourAgo = addMinutes(now, -60);
  const batchId = newEmailId();
  const kinds = Object.keys(ALERT_KINDS) as AlertKind[];
  const due = (kind: SQL) => sql`EXISTS (SELECT 1 FROM operator_alerts a WHERE a.kind = ${kind} AND a.emailed_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM operator_alerts a WHERE a.kind = ${kind} AND a.emailed_at > ${hourAgo})`;
  const subjects = sql.join(
    kinds.map((kind) => sql`SELECT ${kind} AS kind, ${SUBJECTS.operator_alert(settings.shopName, kind)} AS subject`),
    sql` UNION ALL `,
  );
  await runBatch(d1, [
    sql`INSERT INTO emails (id, to_address, user_id, template, subject, data, carries_link, created_at)
        SELECT ${batchId} || '_' || k.kind || '_' || u.id, u.email, u.id, 'operator_alert', k.subject,
               json_object('name', u.name, 'kind', k.kind,
                           'lines', (SELECT json_group_array(line) FROM (SELECT line FROM operator_alerts a
                                     WHERE a.kind = k.kind AND a.emailed_at IS NULL ORDER BY a.id LIMIT ${LINES_PER_EMAIL})),
                           'total', (SELECT count(*) FROM operator_alerts a WHERE a.kind = k.kind AND a.emailed_at IS NULL)),
               0, ${now}
        FROM (${subjects}) AS k JOIN users u ON u.role = 'operator' AND u.disabled_at IS NULL
        WHERE ${due(sql`k.kind`)}`,
    sql`UPDATE operator_alerts SET emailed_at = ${now}
        WHERE emailed_at IS NULL
          AND EXISTS (SELECT 1 FROM emails e WHERE e.id > ${batchId} || '_' || operator_alerts.kind || '_' AND e.id < ${batchId} || '_' || operator_alerts.kind || '_~')`,
  ]);
}
