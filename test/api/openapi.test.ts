import { describe, expect, it } from 'vitest';
import { call } from '../helpers';
import readme from '../../README.md?raw';

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with version 2.0 and lists every route', async () => {
    const res = await call('/openapi.json');
    expect(res.status, res.text).toBe(200);
    expect(res.json.openapi).toBe('3.1.0');
    expect(res.json.info.version).toBe('2.0');
    // The integrator's first hour: the title is the README's name; the description starts with a first request, then test mode.
    expect(res.json.info.title).toBe(/^# (.+)$/m.exec(readme)![1]);
    expect(res.json.info.description).toMatch(/^\*\*A first request\.\*\*[^]*X-API-Key[^]*\*\*Test mode\.\*\*[^]*sk_test_/);
    const paths = Object.keys(res.json.paths).sort();
    expect(paths).toEqual(
      [
        '/',
        '/pay/{deposit_id}',
        '/shop',
        '/shop/{id}',
        '/embed/products/{id}',
        '/r/{code}',
        '/media/{name}',
        '/pay/{deposit_id}/{outcome}',
        '/test/pay/{token}',
        '/api/v2/test/deposits/{id}/pay',
        '/api/v2/test/deposits/{id}/fail',
        '/api/v2/test/deposits/{id}/expire',
        '/api/v2/test/reset',
        '/api/v2/test/claims/{id}/replace',
        '/api/v2/test/claims/{id}/refund',
        '/api/v2/test/claims/{id}/reject',
        '/api/v2/test/orders/{id}/refund',
        '/api/v2/openapi.json',
        '/api/v2',
        '/api/v2/admin/audit-log',
        '/api/v2/admin/blocklist',
        '/api/v2/admin/blocklist/{id}',
        '/api/v2/admin/claims',
        '/api/v2/admin/settings/referrals',
        '/api/v2/user/referral',
        '/api/v2/user/referral/earnings',
        '/api/v2/user/referral/transfer',
        '/api/v2/admin/claims/{id}/refund',
        '/api/v2/admin/claims/{id}/reject',
        '/api/v2/admin/claims/{id}/replace',
        '/api/v2/admin/orders/{id}/refund',
        '/api/v2/admin/users/{id}/hold',
        '/api/v2/admin/coupons',
        '/api/v2/admin/coupons/{id}',
        '/api/v2/admin/deposits',
        '/api/v2/admin/documents',
        '/api/v2/admin/settings/invoicing',
        '/api/v2/documents',
        '/api/v2/documents/{id}',
        '/api/v2/documents/{id}/html',
        '/api/v2/user/billing',
        '/api/v2/admin/deposits/{id}/mark-paid',
        '/api/v2/admin/deposits/{id}/refresh',
        '/api/v2/admin/emails',
        '/api/v2/admin/exports/{file}',
        '/api/v2/admin/gateway-events',
        '/api/v2/admin/gateways',
        '/api/v2/admin/gateways/{slot}/check',
        '/api/v2/admin/orders',
        '/api/v2/admin/orders/{id}',
        '/api/v2/admin/products',
        '/api/v2/admin/products/{id}',
        '/api/v2/admin/products/{id}/stock',
        '/api/v2/admin/products/{id}/image',
        '/api/v2/admin/products/{id}/variants',
        '/api/v2/admin/revoked-items',
        '/api/v2/admin/stats/sales',
        '/api/v2/admin/users',
        '/api/v2/admin/users/{id}',
        '/api/v2/admin/users/{id}/balance-adjustments',
        '/api/v2/admin/users/{id}/password-reset',
        '/api/v2/admin/variants/{id}',
        '/api/v2/api-keys',
        '/api/v2/api-keys/{id}',
        '/api/v2/auth/forgot-password',
        '/api/v2/events',
        '/api/v2/events/{id}',
        '/api/v2/orders',
        '/api/v2/orders/quote',
        '/api/v2/orders/{id}',
        '/api/v2/orders/{id}/cancel',
        '/api/v2/orders/{id}/export',
        '/api/v2/orders/{id}/items/{index}/report',
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
        '/api/v2/wallet/gateways',
        '/api/v2/wallet/transactions',
        '/api/v2/webhooks/{gateway}',
        '/api/v2/webhook-endpoints',
        '/api/v2/webhook-endpoints/{id}',
        '/dashboard',
        '/dashboard/billing',
        '/dashboard/documents',
        '/dashboard/documents/{id}',
        '/dashboard/console',
        '/dashboard/console/audit',
        '/dashboard/console/documents',
        '/dashboard/console/documents/{id}',
        '/dashboard/console/invoicing',
        '/dashboard/console/coupons',
        '/dashboard/console/coupons/{id}',
        '/dashboard/console/users/{id}/discount',
        '/dashboard/console/deposits',
        '/dashboard/console/deposits/{id}/mark-paid',
        '/dashboard/console/deposits/{id}/mark-paid/confirm',
        '/dashboard/console/deposits/{id}/refresh',
        '/dashboard/console/emails',
        '/dashboard/console/emails/{email_id}',
        '/dashboard/console/exports/{file}',
        '/dashboard/console/orders',
        '/dashboard/console/orders/{id}',
        '/dashboard/console/orders/{id}/cancel',
        '/dashboard/console/orders/{id}/cancel/confirm',
        '/dashboard/console/payments',
        '/dashboard/console/payments/{slot}/check',
        '/dashboard/console/products',
        '/dashboard/console/products/{id}',
        '/dashboard/console/products/{id}/stock',
        '/dashboard/console/products/{id}/image',
        '/dashboard/console/products/{id}/image/remove',
        '/dashboard/console/products/{id}/image/remove/confirm',
        '/dashboard/console/products/{id}/items/{item_id}/delete',
        '/dashboard/console/products/{id}/items/{item_id}/delete/confirm',
        '/dashboard/console/revoked-items',
        '/dashboard/console/claims',
        '/dashboard/console/claims/{id}',
        '/dashboard/console/claims/{id}/replace/confirm',
        '/dashboard/console/claims/{id}/replace',
        '/dashboard/console/claims/{id}/refund/confirm',
        '/dashboard/console/claims/{id}/refund',
        '/dashboard/console/claims/{id}/reject/confirm',
        '/dashboard/console/claims/{id}/reject',
        '/dashboard/console/blocklist',
        '/dashboard/console/referrals',
        '/dashboard/console/referrals/settings',
        '/dashboard/console/referrals/users/{id}/off',
        '/dashboard/console/referrals/users/{id}/off/confirm',
        '/dashboard/console/referrals/users/{id}/on',
        '/dashboard/console/referrals/users/{id}/on/confirm',
        '/dashboard/console/blocklist/{id}/remove',
        '/dashboard/console/orders/{id}/refund/confirm',
        '/dashboard/console/orders/{id}/refund',
        '/dashboard/console/users/{id}/hold/confirm',
        '/dashboard/console/users/{id}/hold',
        '/dashboard/console/users/{id}/hold/lift/confirm',
        '/dashboard/console/users/{id}/hold/lift',
        '/dashboard/orders/{id}/items/{index}/report',
        '/dashboard/console/users',
        '/dashboard/console/users/{id}',
        '/dashboard/console/users/{id}/balance',
        '/dashboard/console/users/{id}/balance/confirm',
        '/dashboard/console/users/{id}/disable',
        '/dashboard/console/users/{id}/disable/confirm',
        '/dashboard/console/users/{id}/enable',
        '/dashboard/console/users/{id}/password-reset',
        '/dashboard/keys',
        '/dashboard/keys/{id}/revoke',
        '/dashboard/orders',
        '/dashboard/orders/{id}',
        '/dashboard/orders/{id}/cancel',
        '/dashboard/orders/{id}/cancel/confirm',
        '/dashboard/orders/{id}/export',
        '/dashboard/forgot-password',
        '/dashboard/password',
        '/dashboard/profile',
        '/dashboard/reset-password/{token}',
        '/dashboard/shop',
        '/dashboard/shop/{id}',
        '/dashboard/shop/{id}/pay',
        '/dashboard/shop/{id}/review',
        '/dashboard/sign-in',
        '/dashboard/sign-out',
        '/dashboard/sign-up',
        '/dashboard/wallet',
        '/dashboard/referrals',
        '/dashboard/referrals/transfer',
        '/dashboard/wallet/deposit',
        '/dashboard/wallet/deposits/{id}',
        '/dashboard/verify-email/resend',
        '/dashboard/verify-email/{token}',
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
      'INVALID_PACK_SIZE', 'PRODUCT_UNAVAILABLE', 'ORDER_NOT_CANCELLABLE', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'INTERNAL_ERROR', 'WEBHOOK_ENDPOINT_LIMIT_REACHED',
      'COUPON_INVALID', 'PRICE_CHANGED']) {
      expect(doc.info.description).toContain(code);
    }
    expect(Object.keys(doc.paths['/api/v2/orders'].post.responses).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413', '422', '429', '500', '503']);
  });
});

describe('OpenAPI document for generated clients', () => {
  it('names every operation (unique operationId, tags) and links created resources to the operations that take their id', async () => {
    const doc = (await call('/openapi.json')).json;
    const operations = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((methods) => Object.values(methods));
    const byId = new Map(operations.map((op) => [op.operationId as string, op]));
    expect(operations.every((op) => typeof op.operationId === 'string' && op.tags?.length > 0)).toBe(true);
    expect(byId.size).toBe(operations.length);

    const links = operations.flatMap((op) =>
      Object.values(op.responses as Record<string, { links?: Record<string, any> }>).flatMap((response) =>
        Object.values(response.links ?? {}).map((link) => ({ from: op.operationId as string, ...link })),
      ),
    );
    for (const link of links) {
      const target = byId.get(link.operationId);
      expect(target, `${link.from} → ${link.operationId}`).toBeDefined();
      for (const parameter of Object.keys(link.parameters)) {
        expect(target.parameters.map((p: { name: string }) => p.name), `${link.from} → ${link.operationId}`).toContain(parameter);
      }
    }
    const chained = new Set(links.map((link) => `${link.from} → ${link.operationId}`));
    for (const pair of ['createOrder → cancelOrder', 'createOrder → exportOrder', 'createDeposit → getDepositStatus', 'createApiKey → revokeApiKey']) {
      expect(chained).toContain(pair);
    }
  });
});
