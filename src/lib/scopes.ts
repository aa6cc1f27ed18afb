/**
 * What an API key may do, as a bitmask stored on the key (`api_keys.scopes`). `read` is every GET of the caller's own
 * data; each other scope is one kind of change. A dashboard session has every scope.
 */
export const SCOPES = ['read', 'orders', 'deposits', 'account', 'keys', 'webhooks'] as const;
export type Scope = (typeof SCOPES)[number];

export const scopeBit = (scope: Scope) => 1 << SCOPES.indexOf(scope);
export const ALL_SCOPES = (1 << SCOPES.length) - 1;

export const scopeMask = (scopes: readonly Scope[]) => scopes.reduce((mask, scope) => mask | scopeBit(scope), 0);
export const scopesOf = (mask: number): Scope[] => SCOPES.filter((scope) => (mask & scopeBit(scope)) !== 0);
