import { cryptomusSign } from './cryptomus';
import type { Slot, VendorName } from './slots';
import { probeVendor, type ProbeResult, type VendorRequest } from './vendor-http';

// "Check connection": ONE harmless authenticated read per vendor, chosen from each vendor's API reference, that
// changes nothing at the vendor and succeeds only with a valid key (docs/payment-providers.md names each):
//   NOWPayments  GET  /v1/merchant/coins          x-api-key        the currencies enabled for the account
//   Cryptomus    POST /v1/balance                 merchant + sign  the merchant's balances (a read despite POST)
//   BTCPay       GET  /api/v1/stores/{storeId}    token            the store the key is for
//   Stripe       GET  /v1/balance                 Bearer           the account's balance

const CHECKS: Record<VendorName, (slot: Slot) => Promise<VendorRequest>> = {
  nowpayments: async (slot) => ({ method: 'GET', path: '/v1/merchant/coins', headers: { 'x-api-key': slot.apiKey } }),
  cryptomus: async (slot) => {
    const body = '{}';
    return { method: 'POST', path: '/v1/balance', headers: { 'Content-Type': 'application/json', merchant: slot.account, sign: await cryptomusSign(body, slot.apiKey) }, body };
  },
  btcpay: async (slot) => ({ method: 'GET', path: `/api/v1/stores/${encodeURIComponent(slot.account)}`, headers: { Authorization: `token ${slot.apiKey}` } }),
  stripe: async (slot) => ({ method: 'GET', path: '/v1/balance', headers: { Authorization: `Bearer ${slot.apiKey}` } }),
};

/** The check's one call for a vendor's slot. */
export async function checkVendor(slot: Slot & { provider: VendorName }): Promise<ProbeResult> {
  return probeVendor(slot, await CHECKS[slot.provider](slot));
}
