// Types of scripts/payment-base-url.mjs, for the worker test that imports it (test/payments/dev-payment-base-url.test.ts).
export function devVarsValue(name: string, file?: string): string | undefined;
export function devVarsPaymentBaseUrl(file?: string): string | undefined;
export function localBaseUrl(name: string, port: string, args: string[], configured?: string): { url: string; varArgs: string[] };
export function localPaymentBaseUrl(port: string, args: string[], configured?: string): { url: string; varArgs: string[] };
export function localPublicBaseUrl(port: string, args: string[], configured?: string): { url: string; varArgs: string[] };
