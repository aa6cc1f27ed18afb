import { z } from '@hono/zod-openapi';
import { BLOCK_TYPES } from '../db/schema';
import { PaginationQuery } from '../lib/pagination';
import { IP_OR_CIDR_PATTERN } from '../lib/ip';
import { humanLine, humanText, usdAmount } from '../lib/validation';

// The document states the whole rule of a typed text (humanLine and humanText carry their own patterns, from the one
// list of refused characters), so clients and the contract fuzzer know exactly what is accepted.
const line = humanLine;
const text = humanText;

// Request schemas of "after the sale": a buyer's report, the operator's resolutions, refunds, holds and blocklist
// rules. One home for the API and the pages (dashboard and console).

const MAX_REFUND_CENTS = 100_000_000;

export const ReportBody = z.object({
  reason: text('reason', 500).openapi({ description: 'what is wrong with the item, 1..500 characters', example: 'The code says "already redeemed".' }),
});

/** An item's 0-based index in its order (the path's `{index}`). */
export const ItemIndex = z.object({
  index: z
    .string()
    .regex(/^(0|[1-9]\d{0,3})$/, 'index must be an integer from 0')
    .transform(Number)
    .openapi({ param: { name: 'index', in: 'path' }, type: 'integer', minimum: 0, maximum: 9999, example: 0, description: "0-based index into the order's `stock_items`" }),
});

export const RejectBody = z.object({
  note: text('note', 500).openapi({ description: 'why the claim is rejected (the buyer reads it)' }),
});

export const CLAIM_STATUSES = ['open', 'replaced', 'refunded', 'rejected'] as const;
export const ClaimsQuery = PaginationQuery.extend({
  status: z.enum(CLAIM_STATUSES, `status must be one of ${CLAIM_STATUSES.join(', ')}`).optional(),
});

export const RefundBody = z.object({
  amount: usdAmount('amount', 1, MAX_REFUND_CENTS).openapi({ description: 'USD, more than 0 and at most what is left of the order' }),
  reason: line('reason', 200).openapi({ description: 'why (on the buyer\'s wallet transaction and the audit log)' }),
});

export const HoldBody = z.object({
  reason: line('reason', 200).openapi({ description: 'why the account is on hold (the operator sees it)' }),
});

/** Each rule type's values, as the document states them (the service normalises case and computes an ip range). */
export const BLOCK_VALUE_PATTERNS: Record<(typeof BLOCK_TYPES)[number], { pattern: string; message: string; example: string }> = {
  // An account's email is checked so (src/lib/validation.ts, `emailAddress`): no control, bidi or invisible character.
  email: { pattern: z.regexes.email.source, message: 'value must be an email address', example: 'fraud@example.com' },
  email_domain: {
    pattern: '^(@|\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9][A-Za-z0-9-]{0,61}[A-Za-z0-9]$',
    message: 'value must be an email domain, e.g. example.com, or *.example.com for it and every sub-domain',
    example: 'example.com',
  },
  ip: { pattern: IP_OR_CIDR_PATTERN, message: 'value must be an IPv4 or IPv6 address or a CIDR range, e.g. 203.0.113.0/24', example: '203.0.113.0/24' },
  // Cloudflare's own codes too: T1 (Tor) and XX (unknown).
  country: { pattern: '^([A-Za-z]{2}|[Tt]1)$', message: 'value must be a two-letter ISO 3166 country code, e.g. BE, or T1 (Tor) or XX', example: 'BE' },
  asn: { pattern: '^(AS|as)?[1-9][0-9]{0,9}$', message: 'value must be an AS number, e.g. 64512', example: '64512' },
};

const ruleOf = <T extends (typeof BLOCK_TYPES)[number]>(type: T) =>
  z.object({
    type: z.literal(type),
    value: z
      .string('value must be a string')
      .max(254, 'value may not be greater than 254 characters')
      .regex(new RegExp(BLOCK_VALUE_PATTERNS[type].pattern), BLOCK_VALUE_PATTERNS[type].message)
      .openapi({ example: BLOCK_VALUE_PATTERNS[type].example }),
    note: line('note', 200).nullable().optional(),
  });

export const BlockRuleBody = z.discriminatedUnion(
  'type',
  [ruleOf('email'), ruleOf('email_domain'), ruleOf('ip'), ruleOf('country'), ruleOf('asn')],
  { error: `type must be one of ${BLOCK_TYPES.join(', ')}` },
);
