import type { Bindings, Config } from '../../../env';

// The three gateway slots of the spec (`gateway_one`/`crypto`, `gateway_two`: crypto; `gateway_three`: USD) and the
// provider that serves each, chosen by configuration (`GATEWAY_<SLOT>_*`). The generic adapter is the default.

export const GATEWAYS = ['gateway_one', 'gateway_two', 'gateway_three'] as const;
export type GatewayName = (typeof GATEWAYS)[number];

export const CRYPTO_PROVIDERS = ['nowpayments', 'cryptomus', 'btcpay'] as const;
export const USD_PROVIDERS = ['stripe'] as const;
export type VendorName = (typeof CRYPTO_PROVIDERS)[number] | (typeof USD_PROVIDERS)[number];
export type ProviderName = 'generic' | VendorName;

export const isCryptoGateway = (name: GatewayName) => name !== 'gateway_three';

/** A slot's settings as configured; `slotStatus` says whether they make a usable slot. */
export interface SlotSettings {
  /** As configured (lower-cased); unknown names make the slot unavailable. */
  provider: string;
  apiKey?: string;
  webhookSecret?: string;
  account?: string;
  apiUrl?: string;
}

/** A slot that can take deposits: its provider and every setting that provider uses. */
export interface Slot {
  name: GatewayName;
  provider: ProviderName;
  apiKey: string;
  webhookSecret: string;
  account: string;
  /** The vendor API's base URL, without a trailing slash ('' for the generic adapter). */
  apiUrl: string;
}

const PREFIX: Record<GatewayName, 'GATEWAY_ONE' | 'GATEWAY_TWO' | 'GATEWAY_THREE'> = {
  gateway_one: 'GATEWAY_ONE',
  gateway_two: 'GATEWAY_TWO',
  gateway_three: 'GATEWAY_THREE',
};

const DEFAULT_API_URL: Partial<Record<ProviderName, string>> = {
  nowpayments: 'https://api.nowpayments.io',
  cryptomus: 'https://api.cryptomus.com',
  stripe: 'https://api.stripe.com',
};

/** The settings each provider needs (the contract's table): the generic adapter only its webhook secret. */
const REQUIRED: Record<ProviderName, readonly (keyof Omit<SlotSettings, 'provider'>)[]> = {
  generic: ['webhookSecret'],
  nowpayments: ['apiKey', 'webhookSecret'],
  cryptomus: ['apiKey', 'account'],
  btcpay: ['apiKey', 'webhookSecret', 'account', 'apiUrl'],
  stripe: ['apiKey', 'webhookSecret'],
};

const SETTING_NAMES: Record<keyof Omit<SlotSettings, 'provider'>, string> = {
  apiKey: 'API_KEY',
  webhookSecret: 'WEBHOOK_SECRET',
  account: 'ACCOUNT',
  apiUrl: 'API_URL',
};

const setting = (value: string | undefined) => (value && value.trim() !== '' ? value.trim() : undefined);

/** A slot's settings as its `GATEWAY_<SLOT>_*` vars say (whether they make a usable slot: `slotStatus`). */
export function slotSettings(config: Pick<Config, 'vars'>, name: GatewayName): SlotSettings {
  const prefix = PREFIX[name];
  const vars: Readonly<Bindings> = config.vars;
  return {
    provider: (setting(vars[`${prefix}_PROVIDER`]) ?? 'generic').toLowerCase(),
    apiKey: setting(vars[`${prefix}_API_KEY`]),
    webhookSecret: setting(vars[`${prefix}_WEBHOOK_SECRET`]),
    account: setting(vars[`${prefix}_ACCOUNT`]),
    apiUrl: setting(vars[`${prefix}_API_URL`]),
  };
}

const providersOf = (name: GatewayName): readonly ProviderName[] =>
  isCryptoGateway(name) ? ['generic', ...CRYPTO_PROVIDERS] : ['generic', ...USD_PROVIDERS];

/**
 * A slot ready for deposits, or why it is not (names of settings only, never their values): an unknown provider, one
 * not offered on that slot, or a setting it needs left empty.
 */
export function slotStatus(name: GatewayName, settings: SlotSettings): { slot: Slot } | { reason: string } {
  const prefix = PREFIX[name];
  const provider = providersOf(name).find((p) => p === settings.provider);
  if (!provider) return { reason: `${prefix}_PROVIDER "${settings.provider.slice(0, 40)}" is not one of ${providersOf(name).join(', ')}` };
  const missing = REQUIRED[provider].filter((key) => settings[key] === undefined && !(key === 'apiUrl' && DEFAULT_API_URL[provider]));
  if (missing.length > 0) return { reason: `${prefix}_PROVIDER=${provider} needs ${missing.map((key) => `${prefix}_${SETTING_NAMES[key]}`).join(', ')}` };
  const apiUrl = provider === 'generic' ? '' : (settings.apiUrl ?? DEFAULT_API_URL[provider] ?? '');
  if (provider !== 'generic' && !/^https?:\/\/[^\s/]+/.test(apiUrl)) return { reason: `${prefix}_API_URL is not an http(s) URL` };
  return {
    slot: {
      name,
      provider,
      apiKey: settings.apiKey ?? '',
      webhookSecret: settings.webhookSecret ?? '',
      account: settings.account ?? '',
      apiUrl: apiUrl.replace(/\/+$/, ''),
    },
  };
}

// Each reason is logged once per isolate (and again only if it changes), so a misconfigured slot does not fill the log.
const logged = new Set<string>();

/** The slot, or null when it is not available (the reason logged once, without any secret). */
export function usableSlot(name: GatewayName, settings: SlotSettings): Slot | null {
  const status = slotStatus(name, settings);
  if ('slot' in status) return status.slot;
  if (!logged.has(status.reason)) {
    logged.add(status.reason);
    console.warn(JSON.stringify({ level: 'warn', msg: 'gateway slot not available', gateway: name, reason: status.reason }));
  }
  return null;
}
