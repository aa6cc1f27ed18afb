// Types of scripts/payment-base-url.mjs, for the worker test that imports it (test/dev-payment-base-url.test.ts).
export function devVarsPaymentBaseUrl(file?: string): string | undefined;
export function localPaymentBaseUrl(port: string, args: string[], configured?: string): { url: string; varArgs: string[] };
