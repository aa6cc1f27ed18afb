import type { Config } from '../../../env';
import { fieldError } from '../../../lib/errors';
import { btcpayAdapter } from './btcpay';
import { cryptomusAdapter } from './cryptomus';
import { GenericGateway } from './generic';
import { nowpaymentsAdapter } from './nowpayments';
import { GATEWAYS, isCryptoGateway, slotSettings, usableSlot, type GatewayName, type ProviderName, type Slot, type VendorName } from './slots';
import { stripeAdapter } from './stripe';
import type { VendorAdapter, VendorFactory } from './types';
import { TestGateway } from './test';

// The registry: which provider serves each slot, and the adapter that speaks to it. The wallet code asks for a
// slot's gateway and gets either the generic adapter (signed JSON webhooks, the local checkout page) or a real
// vendor's adapter behind one interface (src/services/payments/gateways/types.ts).

export { GATEWAYS, isCryptoGateway, type GatewayName, type ProviderName } from './slots';
export { GenericWebhookBody, WEBHOOK_STATUSES, type GatewayEvent, type WebhookStatus } from './generic';
export type { DepositKey, LookupAnswer, Verdict, VendorAdapter, VendorNotification, VendorReport } from './types';

export const GATEWAY_INPUTS = ['gateway_one', 'crypto', 'gateway_two', 'gateway_three'] as const;
export type GatewayInput = (typeof GATEWAY_INPUTS)[number];

export const CRYPTO_CURRENCIES = ['USDT', 'USDC', 'BTC', 'ETH', 'LTC'] as const;
export type CryptoCurrency = (typeof CRYPTO_CURRENCIES)[number];
export const DEFAULT_CRYPTO_CURRENCY: CryptoCurrency = 'USDT';

export const normaliseGateway = (input: GatewayInput): GatewayName => (input === 'crypto' ? 'gateway_one' : input);

export const isGatewayName = (value: string): value is GatewayName => (GATEWAYS as readonly string[]).includes(value);

const VENDORS: Record<VendorName, VendorFactory> = {
  nowpayments: nowpaymentsAdapter,
  cryptomus: cryptomusAdapter,
  btcpay: btcpayAdapter,
  stripe: stripeAdapter,
};

/** A slot ready for deposits, with the adapter of its provider. */
export type PaymentGateway = { name: GatewayName; isCrypto: boolean; slot: Slot } & (
  | { provider: 'generic'; generic: GenericGateway }
  | { provider: VendorName; vendor: VendorAdapter }
);

/** The slot's gateway, or null when the slot is not available (its reason logged once). */
export function findGateway(name: GatewayName, config: Config): PaymentGateway | null {
  const slot = usableSlot(name, slotSettings(config, name));
  if (!slot) return null;
  const base = { name, isCrypto: isCryptoGateway(name), slot };
  return slot.provider === 'generic'
    ? { ...base, provider: 'generic', generic: new GenericGateway(name, config) }
    : { ...base, provider: slot.provider, vendor: VENDORS[slot.provider](slot) };
}

/** In test mode every slot is the test gateway (src/services/payments/gateways/test.ts). */
export type TestPaymentGateway = { name: GatewayName; isCrypto: boolean; provider: 'test'; test: TestGateway };

const testGatewayOf = (name: GatewayName, config: Config): TestPaymentGateway | null =>
  config.testGateway ? { name, isCrypto: isCryptoGateway(name), provider: 'test', test: new TestGateway(name, config.testGateway.publicBaseUrl) } : null;

/** The slot's gateway for a new deposit: a slot that is not available is a 422 on `gateway`, nothing stored. */
export function gatewayForDeposit(name: GatewayName, config: Config): PaymentGateway | TestPaymentGateway {
  const gateway = testGatewayOf(name, config) ?? findGateway(name, config);
  if (!gateway) throw fieldError('gateway', `${name} is not available.`);
  return gateway;
}

export interface GatewayOffer {
  gateway: GatewayName;
  kind: 'crypto' | 'usd';
  provider: ProviderName | 'test';
  crypto_currencies: CryptoCurrency[];
}

/** The available slots in order, as `GET /wallet/gateways` lists them and the dashboard offers them. */
export function availableGateways(config: Config): GatewayOffer[] {
  return GATEWAYS.flatMap((name) => {
    const gateway = testGatewayOf(name, config) ?? findGateway(name, config);
    if (!gateway) return [];
    const kind = gateway.isCrypto ? ('crypto' as const) : ('usd' as const);
    return [{ gateway: name, kind, provider: gateway.provider, crypto_currencies: gateway.isCrypto ? [...CRYPTO_CURRENCIES] : [] }];
  });
}
