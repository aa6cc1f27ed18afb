import { z } from '@hono/zod-openapi';
import { usdAmount } from '../lib/validation';
import { CRYPTO_CURRENCIES, GATEWAY_INPUTS } from '../services/payments/gateways';
import { DepositOrder } from './orders';

// Request schemas of deposits, shared by the API and the dashboard's wallet.

export const MIN_DEPOSIT_CENTS = 100;
export const MAX_DEPOSIT_CENTS = 1_000_000;

export const DepositBody = z.object({
  amount: usdAmount('amount', MIN_DEPOSIT_CENTS, MAX_DEPOSIT_CENTS).openapi({ example: 50 }),
  gateway: z.enum(GATEWAY_INPUTS, `gateway must be one of ${GATEWAY_INPUTS.join(', ')}`),
  crypto_currency: z
    .enum(CRYPTO_CURRENCIES, `crypto_currency must be one of ${CRYPTO_CURRENCIES.join(', ')}`)
    .optional()
    .openapi({ description: 'crypto gateways only; default USDT' }),
  order: DepositOrder.optional(),
});
