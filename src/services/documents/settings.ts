import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { billingDetails, invoicingSettings, type BillingDetailsRow, type InvoicingSettingsRow } from '../../db/schema';
import { unauthorized } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import type { BillingInput, InvoicingSettingsInput } from '../../schemas/documents';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import { writeAs, type Caller, type Query } from '../caller';

// Who sells and who buys, as the next document will name them: the owner's invoicing settings (one row) and a
// buyer's billing details. A document copies them when it is issued (src/services/documents/issue.ts), so changing
// them never changes a document already issued.

export interface InvoicingSettings {
  legalName: string;
  address: string[];
  country: string | null;
  taxId: string | null;
  taxMode: 'none' | 'vat';
  /** country -> basis points (percent x 100) */
  vatRates: Record<string, number>;
}

export interface BillingDetails {
  name: string;
  company: string | null;
  address: string[];
  country: string | null;
  vatId: string | null;
}

/** The settings from a valid request body (the admin API's and the console's form). */
export const settingsFromBody = (body: InvoicingSettingsInput): InvoicingSettings => ({
  legalName: body.legal_name,
  address: body.address,
  country: body.country,
  taxId: body.tax_id,
  taxMode: body.tax_mode,
  vatRates: body.vat_rates,
});

/** The billing details from a valid request body (the API's and the profile page's form). */
export const billingFromBody = (body: BillingInput): BillingDetails => ({
  name: body.name,
  company: body.company,
  address: body.address,
  country: body.country,
  vatId: body.vat_id,
});

const fromSettingsRow = (row: InvoicingSettingsRow): InvoicingSettings => ({
  legalName: row.legalName,
  address: JSON.parse(row.address) as string[],
  country: row.country,
  taxId: row.taxId,
  taxMode: row.taxMode,
  vatRates: JSON.parse(row.vatRates) as Record<string, number>,
});

export const presentInvoicingSettings = (s: InvoicingSettings) => ({
  legal_name: s.legalName,
  address: s.address,
  country: s.country,
  tax_id: s.taxId,
  tax_mode: s.taxMode,
  vat_rates: Object.fromEntries(Object.entries(s.vatRates).map(([country, bp]) => [country, bp / 100])),
});

export const presentBilling = (b: BillingDetails) => ({ name: b.name, company: b.company, address: b.address, country: b.country, vat_id: b.vatId });

const SETTINGS_READ = sql`SELECT ${columnsOf(invoicingSettings)} FROM invoicing_settings WHERE id = 1`;

export const invoicingSettingsQuery: Query<InvoicingSettings> = {
  reads: [SETTINGS_READ],
  parse: ([rows]) => fromSettingsRow(rowsOf<InvoicingSettingsRow>(rows)[0]),
};

/** Replace the invoicing settings (audited `settings.invoicing_updated`): one batch. */
export async function updateInvoicingSettings(d1: Db, actor: Actor, settings: InvoicingSettings): Promise<InvoicingSettings> {
  const now = isoNow();
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      sql`UPDATE invoicing_settings SET legal_name = ${settings.legalName}, address = ${JSON.stringify(settings.address)}, country = ${settings.country},
                                        tax_id = ${settings.taxId}, tax_mode = ${settings.taxMode}, vat_rates = ${JSON.stringify(settings.vatRates)},
                                        updated_at = ${now}
          WHERE id = 1`,
      auditEntry(
        actor,
        {
          action: 'settings.invoicing_updated',
          target: sql`'settings:invoicing'`,
          details: sql`json_object('legal_name', legal_name, 'country', country, 'tax_id', tax_id, 'tax_mode', tax_mode, 'vat_rates', json(vat_rates))`,
          from: sql`FROM invoicing_settings WHERE id = 1`,
        },
        now,
      ),
    ],
    reads: [SETTINGS_READ],
    // Settings are replaced whole: running the same replacement again changes nothing more.
    committed: ([rows]) => rowsOf<InvoicingSettingsRow>(rows)[0]?.updatedAt === now,
  });
  return fromSettingsRow(rowsOf<InvoicingSettingsRow>(reads[0])[0]);
}

const fromBillingRow = (row: BillingDetailsRow): BillingDetails => ({
  name: row.name,
  company: row.company,
  address: JSON.parse(row.address) as string[],
  country: row.country,
  vatId: row.vatId,
});

/** The caller's billing details; until set, the account's name and nothing else. */
export const billingQuery = (caller: Caller): Query<BillingDetails> => ({
  reads: [
    sql`SELECT u.name AS accountName, b.user_id AS userId, b.name, b.company, b.address, b.country, b.vat_id AS vatId
        FROM users u LEFT JOIN billing_details b ON b.user_id = u.id WHERE u.id = ${caller.userId}`,
  ],
  parse: ([rows]) => {
    const [row] = rowsOf<BillingDetailsRow & { accountName: string }>(rows);
    if (!row) throw unauthorized('The API key is invalid or has been revoked.');
    if (row.userId === null) return { name: row.accountName, company: null, address: [], country: null, vatId: null };
    return fromBillingRow(row);
  },
});

/** Replace the caller's billing details: one batch, the proof first. */
export async function updateBilling(d1: Db, caller: Caller, details: BillingDetails): Promise<BillingDetails> {
  const now = isoNow();
  const values = [details.name, details.company, JSON.stringify(details.address), details.country, details.vatId] as const;
  const [rows] = await writeAs(d1, caller, {
    writes: [
      sql`INSERT INTO billing_details (user_id, name, company, address, country, vat_id, updated_at)
          SELECT ${caller.userId}, ${values[0]}, ${values[1]}, ${values[2]}, ${values[3]}, ${values[4]}, ${now} WHERE ${caller.userId} IS NOT NULL
          ON CONFLICT (user_id) DO UPDATE SET name = excluded.name, company = excluded.company, address = excluded.address,
                                              country = excluded.country, vat_id = excluded.vat_id, updated_at = excluded.updated_at`,
    ],
    reads: [sql`SELECT ${columnsOf(billingDetails)} FROM billing_details WHERE user_id = ${caller.userId}`],
    committed: ([r]) => rowsOf<BillingDetailsRow>(r)[0]?.updatedAt === now,
  });
  return fromBillingRow(rowsOf<BillingDetailsRow>(rows)[0]);
}
