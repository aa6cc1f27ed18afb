import { sql, type SQL } from 'drizzle-orm';
import type { InvoiceColumns } from './generic';
import type { GatewayName } from './slots';

// The test gateway: in test mode (the sandbox) it serves every slot. Its "invoice" is a page of this service,
// `<PUBLIC_BASE_URL>/test/pay/<deposit_id>` ("Pay", "Pay less", "Fail"), and code drives it with
// `POST /test/deposits/{id}/pay | fail | expire`. What it reports goes through the very paths a real vendor's report
// takes (src/services/payments/vendor-notifications.ts): a paid deposit is credited by `creditDeposit`, a short payment (under 99 %
// of the deposit) is logged as `amount_mismatch` and credits nothing, a failure or expiry closes the deposit with
// `closeDeposit`; events, webhooks and the gateway log follow as in live.

export const TEST_PROVIDER = 'test';

export class TestGateway {
  readonly provider = TEST_PROVIDER;

  constructor(
    readonly name: GatewayName,
    private readonly publicBaseUrl: string,
  ) {}

  /** The payment page and the "invoice" id, derived from the deposit's id inside its own batch (as the generic adapter's). */
  invoiceColumns(depositId: SQL): InvoiceColumns {
    return {
      paymentUrl: sql`${`${this.publicBaseUrl}/test/pay/`} || ${depositId}`,
      externalId: sql`${'test_'} || ${depositId}`,
    };
  }
}

