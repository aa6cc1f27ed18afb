import type { Config } from '../env';

/** Gateway names as stored and reported in `payment_method`; `crypto` is accepted as an alias of gateway_one. */
export const GATEWAYS = ['gateway_one', 'gateway_two', 'gateway_three'] as const;
export type GatewayName = (typeof GATEWAYS)[number];
export const GATEWAY_INPUTS = ['gateway_one', 'crypto', 'gateway_two', 'gateway_three'] as const;
export type GatewayInput = (typeof GATEWAY_INPUTS)[number];

export const CRYPTO_CURRENCIES = ['USDT', 'USDC', 'BTC', 'ETH', 'LTC'] as const;
export type CryptoCurrency = (typeof CRYPTO_CURRENCIES)[number];
export const DEFAULT_CRYPTO_CURRENCY: CryptoCurrency = 'USDT';

export interface InvoiceRequest {
  depositId: number;
  amountCents: number;
  cryptoCurrency: CryptoCurrency | null;
  expiresAt: string;
}

export interface Invoice {
  paymentUrl: string;
  externalId: string;
}

/** One payment gateway. A vendor's real API and webhook format replace an adapter without touching the wallet. */
export interface PaymentGateway {
  readonly name: GatewayName;
  readonly isCrypto: boolean;
  createInvoice(request: InvoiceRequest): Promise<Invoice>;
}

export const normaliseGateway = (input: GatewayInput): GatewayName => (input === 'crypto' ? 'gateway_one' : input);

export const isCryptoGateway = (name: GatewayName) => name !== 'gateway_three';

/**
 * The generic adapter: its checkout lives at `${PAYMENT_BASE_URL}/pay/{deposit_id}` (the local checkout page in
 * development) and it signs webhooks with the contract's generic format.
 */
class GenericGateway implements PaymentGateway {
  constructor(
    readonly name: GatewayName,
    private readonly config: Config,
  ) {}

  get isCrypto() {
    return isCryptoGateway(this.name);
  }

  async createInvoice(request: InvoiceRequest): Promise<Invoice> {
    return { paymentUrl: `${this.config.paymentBaseUrl}/pay/${request.depositId}`, externalId: `${this.name}_${request.depositId}` };
  }
}

export function getGateway(name: GatewayName, config: Config): PaymentGateway {
  return new GenericGateway(name, config);
}
