import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Config } from '../../../env';
import { hmacSha256Hex, timingSafeEqualStrings } from '../../../lib/crypto';
import { parseJsonExactly } from '../../../lib/exact-json';
import { fieldErrors, unauthorized, validationFailed } from '../../../lib/errors';
import { usdAmount } from '../../../lib/validation';
import { parseSignatureHeader, SIGNATURE_TOLERANCE_SECONDS, signatureHeader } from '../../../lib/signature';
import { isCryptoGateway, slotSettings, type GatewayName } from './slots';

export const WEBHOOK_STATUSES = ['paid', 'failed', 'expired'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Where the buyer pays a deposit, and the gateway's id for it, as SQL values written in the deposit's own batch. */
export interface InvoiceColumns {
  paymentUrl: SQL;
  externalId: SQL;
}

/** What a gateway tells us about a deposit, whatever its wire format. */
export interface GatewayEvent {
  depositId: number;
  status: WebhookStatus;
  amountCents: number;
  transactionId: string;
}

export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
}

/** The generic adapter's webhook body; the webhook route documents it (src/routes/payments/webhooks.ts). */
export const GenericWebhookBody = z.object({
  deposit_id: z.int('deposit_id must be an integer').min(1).max(Number.MAX_SAFE_INTEGER),
  status: z.enum(WEBHOOK_STATUSES, `status must be one of ${WEBHOOK_STATUSES.join(', ')}`),
  amount: usdAmount('amount', 1, Number.MAX_SAFE_INTEGER),
  transaction_id: z.string('transaction_id must be a string').min(1).max(255),
});

/**
 * The contract's generic adapter: checkout at `${PAYMENT_BASE_URL}/pay/{deposit_id}` (the local checkout page in
 * development) and HMAC-signed JSON webhooks.
 */
export class GenericGateway {
  constructor(
    readonly name: GatewayName,
    private readonly config: Config,
  ) {}

  get isCrypto() {
    return isCryptoGateway(this.name);
  }

  private get secret() {
    return slotSettings(this.config, this.name).webhookSecret;
  }

  invoiceColumns(depositId: SQL): InvoiceColumns {
    return {
      paymentUrl: sql`${`${this.config.paymentBaseUrl}/pay/`} || ${depositId}`,
      externalId: sql`${`${this.name}_`} || ${depositId}`,
    };
  }

  async parseWebhook(rawBody: string, headers: Headers, nowMs: number): Promise<GatewayEvent> {
    const secret = this.secret;
    const signature = parseSignatureHeader(headers.get('X-Signature'));
    if (!secret || !signature) throw unauthorized('Missing or malformed webhook signature.');
    const expected = await hmacSha256Hex(secret, `${signature.t}.${rawBody}`);
    const fresh = Math.abs(nowMs / 1000 - signature.t) <= SIGNATURE_TOLERANCE_SECONDS;
    // Compare first, then check freshness, so timing says nothing about which check failed.
    if (!(await timingSafeEqualStrings(signature.v1, expected)) || !fresh) throw unauthorized('Invalid webhook signature.');

    let json: unknown;
    try {
      json = parseJsonExactly(rawBody);
    } catch {
      throw validationFailed({ body: ['The body is not valid JSON.'] });
    }
    const parsed = GenericWebhookBody.safeParse(json);
    if (!parsed.success) throw validationFailed(fieldErrors(parsed.error, json));
    const { deposit_id: depositId, status, amount: amountCents, transaction_id: transactionId } = parsed.data;
    return { depositId, status, amountCents, transactionId };
  }

  async signWebhook(event: GatewayEvent, nowMs: number): Promise<SignedWebhook> {
    const secret = this.secret;
    if (!secret) throw unauthorized(`No webhook secret is configured for ${this.name}.`);
    const body = JSON.stringify({
      deposit_id: event.depositId,
      status: event.status,
      amount: event.amountCents / 100,
      transaction_id: event.transactionId,
    });
    return { body, headers: { 'Content-Type': 'application/json', 'X-Signature': await signatureHeader(secret, body, nowMs) } };
  }
}

