import { z } from '@hono/zod-openapi';
import { DOCUMENT_TYPES } from '../db/schema';
import { PaginationQuery } from '../lib/pagination';
import { humanLine, optionalIdQuery, usdAmount } from '../lib/validation';

// Request schemas of documents for the books: the seller's invoicing settings, the buyer's billing details, the
// document lists. One home for the API and the pages (dashboard and console).

const COUNTRY = /^[A-Z]{2}$/;
export const countryCode = (field: string) =>
  z
    .string(`${field} must be a string`)
    .regex(COUNTRY, `${field} must be an ISO 3166-1 alpha-2 code in capitals, e.g. DE`)
    .openapi({ example: 'DE', pattern: '^[A-Z]{2}$' });

const addressLines = (field: string) =>
  z
    .array(humanLine(`${field} line`, 200), `${field} must be an array of lines`)
    .max(6, `${field} may have at most 6 lines`)
    .openapi({ description: 'address lines, at most 6 of at most 200 characters', example: ['1 Main Street', '10115 Berlin'] });

/** A VAT rate in percent (0..50, at most 2 decimals), read as written like an amount: kept in basis points. */
const vatRate = usdAmount('vat rate', 0, 5000).openapi({ description: 'percent, 0..50, at most 2 decimals', example: 19 });

export const TAX_MODES = ['none', 'vat'] as const;

export const InvoicingSettingsBody = z
  .object({
    legal_name: humanLine('legal_name', 200).openapi({ description: "the seller's legal name, on every document", example: 'Example Shop GmbH' }),
    address: addressLines('address').default([]),
    country: countryCode('country').nullable().default(null),
    tax_id: humanLine('tax_id', 50).nullable().default(null).openapi({ description: "the seller's VAT or tax id", example: 'DE123456789' }),
    tax_mode: z.enum(TAX_MODES, `tax_mode must be one of ${TAX_MODES.join(', ')}`).default('none'),
    vat_rates: z
      .record(countryCode('vat_rates key'), vatRate, 'vat_rates must be an object of country: percent')
      .default({})
      .refine((rates) => Object.keys(rates).length <= 60, 'vat_rates may have at most 60 countries')
      .openapi({ description: 'rate in percent by buyer country (ISO alpha-2)', example: { DE: 19, FR: 20 } }),
  });
export type InvoicingSettingsInput = z.output<typeof InvoicingSettingsBody>;

export const BillingBody = z.object({
  name: humanLine('name', 200).openapi({ description: 'the name on your documents', example: 'Jane Doe' }),
  company: humanLine('company', 200).nullable().default(null),
  address: addressLines('address').default([]),
  country: countryCode('country').nullable().default(null),
  vat_id: humanLine('vat_id', 50).nullable().default(null).openapi({ description: 'your VAT id (a business buyer in another EU country: reverse charge)', example: 'FR12345678901' }),
});
export type BillingInput = z.output<typeof BillingBody>;

export const DocumentsQuery = PaginationQuery.extend({
  type: z.enum(DOCUMENT_TYPES, `type must be one of ${DOCUMENT_TYPES.join(', ')}`).optional(),
});

export const AdminDocumentsQuery = DocumentsQuery.extend({
  user_id: optionalIdQuery('user_id'),
});
