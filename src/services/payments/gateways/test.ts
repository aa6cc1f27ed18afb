import { sql } from 'drizzle-orm';
import { randomBase62 } from '../../../lib/crypto';
import type { InvoiceColumns } from './generic';
import type { GatewayName } from './slots';

// The test gateway: in test mode (the sandbox) it serves every slot. Its "invoice" is a page of this service,
// `<PUBLIC_BASE_URL>/test/pay/<token>` ("Pay", "Pay less", "Fail"; the token unguessable, as a vendor's checkout
// link is: a deposit id alone opens nothing), and code drives it with
// `POST /test/deposits/{id}/pay | fail | expire`. What it reports goes through the very paths a real vendor's report
// takes (src/services/payments/vendor-notifications.ts): a paid deposit is credited by `creditDeposit`, a short payment (under 99 %
// of the deposit) is logged as `amount_mismatch` and credits nothing, a failure or expiry closes the deposit with
// `closeDeposit`; events, webhooks and the gateway log follow as in live.

export const TEST_PROVIDER = 'test';

/** A test payment page's token: 32 base62 characters (190 bits). */
export const TEST_PAY_TOKEN = /^[0-9A-Za-z]{32}$/;
const TEST_PAY_TOKEN_LENGTH = 32;

/** The external id a test deposit keeps its page's token as. */
export const testPayExternalId = (token: string) => `test_pay_${token}`;

export class TestGateway {
  readonly provider = TEST_PROVIDER;

  constructor(
    readonly name: GatewayName,
    private readonly publicBaseUrl: string,
  ) {}

  /** The payment page and the "invoice" id: a fresh token, kept as the deposit's external id (the page finds it so). */
  invoiceColumns(): InvoiceColumns {
    const token = randomBase62(TEST_PAY_TOKEN_LENGTH);
    return { paymentUrl: sql`${`${this.publicBaseUrl}/test/pay/${token}`}`, externalId: sql`${testPayExternalId(token)}` };
  }
}

