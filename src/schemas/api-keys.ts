import { z } from '@hono/zod-openapi';
import { IP_OR_CIDR_PATTERN } from '../lib/ip';
import { SCOPES } from '../lib/scopes';
import { humanLine, usdAmount } from '../lib/validation';

// Request schemas of API keys, shared by the API and the dashboard's keys page.

export const MAX_ALLOWED_IPS = 20;
const MAX_SPEND_LIMIT_CENTS = 100_000_000;

export const ScopeName = z.enum(SCOPES, `each scope must be one of ${SCOPES.join(', ')}`);

/** One entry of `allowed_ips`: an address or a CIDR range, v4 or v6; the pattern is src/lib/ip.ts's grammar. */
export const IpOrCidr = z
  .string('each allowed IP must be a string')
  .regex(new RegExp(IP_OR_CIDR_PATTERN), 'each allowed IP must be an IPv4 or IPv6 address or CIDR range (e.g. 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)')
  .openapi({
    description:
      'An IPv4 or IPv6 address (`203.0.113.7`, `2001:db8::1`, `::ffff:203.0.113.7`) or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`). An IPv4 address also matches as its IPv4-mapped IPv6 form.',
    example: '203.0.113.0/24',
  });

/**
 * What a new key may do. Each field left out is inherited from the key making it (a dashboard session: every scope,
 * no limit, anywhere, never expires); `null` asks for none explicitly.
 */
export const KEY_MODES = ['live', 'test'] as const;

export const CreateApiKeyBody = z.object({
  name: humanLine('name', 100),
  mode: z
    .enum(KEY_MODES, `mode must be one of ${KEY_MODES.join(', ')}`)
    .optional()
    .openapi({
      description: "`test`: a sk_test_ key, answered from the test-mode sandbox. Default: the mode of the key making it. A test key makes only test keys.",
      example: 'test',
    }),
  scopes: z
    .array(ScopeName, 'scopes must be an array')
    .min(1, 'scopes must name at least one scope')
    .refine((scopes) => new Set(scopes).size === scopes.length, 'scopes may not repeat a scope')
    .optional()
    .openapi({ description: 'What the key may do; default: every scope of the key making it', example: ['read'], uniqueItems: true }),
  spend_limit_per_day: usdAmount('spend_limit_per_day', 1, MAX_SPEND_LIMIT_CENTS)
    .nullable()
    .optional()
    .openapi({ description: 'USD the key may spend on purchases per UTC day; null: no limit', example: 50 }),
  allowed_ips: z
    .array(IpOrCidr, 'allowed_ips must be an array')
    .min(1, 'allowed_ips must list at least one address (or be null for anywhere)')
    .max(MAX_ALLOWED_IPS, `allowed_ips may list at most ${MAX_ALLOWED_IPS} entries`)
    .nullable()
    .optional()
    .openapi({ description: 'Client addresses (CF-Connecting-IP) the key works from; null: anywhere' }),
  expires_at: z.iso
    .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time' })
    .transform((text) => new Date(text).toISOString())
    .refine((iso) => iso > new Date().toISOString(), 'expires_at must be in the future')
    .nullable()
    .optional()
    .openapi({ description: 'When the key stops working; null: never', example: '2027-01-01T00:00:00Z' }),
});

export type CreateApiKeyRequest = z.output<typeof CreateApiKeyBody>;
