import { z } from '@hono/zod-openapi';
import { BLOCK_TYPES } from '../db/schema';
import { PaginationQuery } from '../lib/pagination';
import { humanLine, humanText, usdAmount } from '../lib/validation';

// Request schemas of "after the sale": a buyer's report, the operator's resolutions, refunds, holds and blocklist
// rules. One home for the API and the pages (dashboard and console).

const MAX_REFUND_CENTS = 100_000_000;

export const ReportBody = z.object({
  reason: humanText('reason', 500).openapi({ description: 'what is wrong with the item, 1..500 characters', example: 'The code says "already redeemed".' }),
});

export const ItemParams = z.object({
  id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'id must be a positive integer')
    .transform(Number)
    .openapi({ param: { name: 'id', in: 'path' }, type: 'integer', minimum: 1, example: 1 }),
  index: z
    .string()
    .regex(/^(0|[1-9]\d{0,3})$/, 'index must be an integer from 0')
    .transform(Number)
    .openapi({ param: { name: 'index', in: 'path' }, type: 'integer', minimum: 0, maximum: 9999, example: 0, description: "0-based index into the order's `stock_items`" }),
});

export const RejectBody = z.object({
  note: humanText('note', 500).openapi({ description: 'why the claim is rejected (the buyer reads it)' }),
});

export const CLAIM_STATUSES = ['open', 'replaced', 'refunded', 'rejected'] as const;
export const ClaimsQuery = PaginationQuery.extend({
  status: z.enum(CLAIM_STATUSES, `status must be one of ${CLAIM_STATUSES.join(', ')}`).optional(),
});

export const RefundBody = z.object({
  amount: usdAmount('amount', 1, MAX_REFUND_CENTS).openapi({ description: 'USD, more than 0 and at most what is left of the order' }),
  reason: humanLine('reason', 200).openapi({ description: 'why (on the buyer\'s wallet transaction and the audit log)' }),
});

export const HoldBody = z.object({
  reason: humanLine('reason', 200).openapi({ description: 'why the account is on hold (the operator sees it)' }),
});

export const BlockRuleBody = z.object({
  type: z.enum(BLOCK_TYPES, `type must be one of ${BLOCK_TYPES.join(', ')}`),
  value: z
    .string('value must be a string')
    .min(1, 'value is required')
    .max(254, 'value may not be greater than 254 characters')
    .openapi({ description: 'an email; a domain (example.com); an address or CIDR range, v4 or v6; a two-letter country code; an AS number' }),
  note: humanLine('note', 200).nullable().optional(),
});
