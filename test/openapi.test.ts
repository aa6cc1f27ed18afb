import { describe, expect, it } from 'vitest';
import { call } from './helpers';

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with version 2.0 and lists every route', async () => {
    const res = await call('/openapi.json');
    expect(res.status, res.text).toBe(200);
    expect(res.json.openapi).toBe('3.1.0');
    expect(res.json.info.version).toBe('2.0');
    const paths = Object.keys(res.json.paths).sort();
    expect(paths).toEqual(
      [
        '/',
        '/docs',
        '/favicon.ico',
        '/docs/swagger-ui-bundle.js',
        '/docs/swagger-ui.css',
        '/pay/{deposit_id}',
        '/pay/{deposit_id}/{outcome}',
        '/api/v2/openapi.json',
        '/api/v2',
        '/api/v2/admin/deposits/{id}/mark-paid',
        '/api/v2/admin/products',
        '/api/v2/admin/products/{id}',
        '/api/v2/admin/products/{id}/stock',
        '/api/v2/admin/users',
        '/api/v2/admin/users/{id}/balance-adjustments',
        '/api/v2/api-keys',
        '/api/v2/api-keys/{id}',
        '/api/v2/orders',
        '/api/v2/orders/{id}',
        '/api/v2/orders/{id}/cancel',
        '/api/v2/orders/{id}/export',
        '/api/v2/stock',
        '/api/v2/stock/categories',
        '/api/v2/stock/check',
        '/api/v2/stock/{product_id}',
        '/api/v2/stock/{product_id}/badge.svg',
        '/api/v2/user/dashboard',
        '/api/v2/user/password',
        '/api/v2/user/profile',
        '/api/v2/wallet/balance',
        '/api/v2/wallet/deposit',
        '/api/v2/wallet/deposits',
        '/api/v2/wallet/deposits/{id}/status',
        '/api/v2/wallet/transactions',
        '/api/v2/webhooks/{gateway}',
        '/dashboard',
        '/dashboard/assets/app.css',
        '/dashboard/assets/icon.svg',
        '/dashboard/keys',
        '/dashboard/keys/{id}/revoke',
        '/dashboard/orders',
        '/dashboard/orders/{id}',
        '/dashboard/orders/{id}/cancel',
        '/dashboard/orders/{id}/export',
        '/dashboard/password',
        '/dashboard/profile',
        '/dashboard/shop',
        '/dashboard/sign-in',
        '/dashboard/sign-out',
        '/dashboard/sign-up',
        '/dashboard/wallet',
        '/dashboard/wallet/deposit',
      ].sort(),
    );
  });
});

describe('OpenAPI document details', () => {
  it('documents security schemes, the idempotency header and every error code of the contract', async () => {
    const doc = (await call('/openapi.json')).json;
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['AdminBearer', 'ApiKeyHeader', 'ApiKeyQuery', 'WebhookSignature']);
    expect(doc.components.securitySchemes.ApiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.components.securitySchemes.ApiKeyQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'api_key' });
    for (const [path, method] of [['/api/v2/orders', 'post'], ['/api/v2/orders/{id}/cancel', 'post'], ['/api/v2/wallet/deposit', 'post']]) {
      expect(doc.paths[path][method].parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    }
    for (const code of ['UNAUTHORIZED', 'API_KEY_LIMIT_REACHED', 'NOT_FOUND', 'VALIDATION_FAILED', 'INSUFFICIENT_BALANCE', 'INSUFFICIENT_STOCK',
      'INVALID_PACK_SIZE', 'PRODUCT_UNAVAILABLE', 'ORDER_NOT_CANCELLABLE', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'INTERNAL_ERROR']) {
      expect(doc.info.description).toContain(code);
    }
    expect(Object.keys(doc.paths['/api/v2/orders'].post.responses).sort()).toEqual(['201', '400', '401', '404', '413', '422', '429', '500']);
  });
});
