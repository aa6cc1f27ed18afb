import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { visit } from '../dashboard-helpers';
import { call, expectError, newUser } from '../helpers';

// A date that is no calendar day (month 13 or 00, day 32, February 30) is a 422 on its field on every route that
// reads one, never a 500: the check used to call toISOString() on an Invalid Date and throw.

const NOT_DAYS = ['2026-13-01', '2026-00-10', '2026-01-32', '2026-02-30', '2026-04-31', '2026-01-00'];
const ADMIN_LISTS = ['/admin/orders', '/admin/deposits', '/admin/audit-log', '/admin/exports/orders.csv', '/admin/exports/deposits.csv', '/admin/exports/transactions.csv'];
const CONSOLE_PAGES = [
  '/dashboard/console/orders',
  '/dashboard/console/deposits',
  '/dashboard/console/audit',
  '/dashboard/console/exports/orders.csv',
  '/dashboard/console/exports/deposits.csv',
  '/dashboard/console/exports/transactions.csv',
];

describe('a from / to that is not a real calendar day', () => {
  it('is a 422 on that field on every admin list and export', async () => {
    for (const day of NOT_DAYS) {
      for (const field of ['from', 'to']) {
        for (const path of ADMIN_LISTS) {
          const res = await call(`${path}?${field}=${day}`, { admin: true });
          expectError(res, 422, 'VALIDATION_FAILED');
          expect(Object.keys(res.json.errors), `${path}?${field}=${day}`).toEqual([field]);
        }
      }
    }
  });

  it('is a 422 page on every console page and export that reads one', async () => {
    const operator = await newOperator();
    for (const day of NOT_DAYS) {
      for (const field of ['from', 'to']) {
        for (const path of CONSOLE_PAGES) {
          const page = await visit(`${path}?${field}=${day}`, { cookie: operator.cookie });
          expect(page.status, `${path}?${field}=${day}`).toBe(422);
        }
      }
    }
  });

  it('real days, 29 February of a leap year included, are taken', async () => {
    for (const path of ADMIN_LISTS) {
      expect((await call(`${path}?from=2024-02-29&to=2026-12-31`, { admin: true })).status, path).toBe(200);
    }
    expectError(await call('/admin/orders?from=2025-02-29', { admin: true }), 422, 'VALIDATION_FAILED');
  });
});

describe('timestamps with a month or day that does not exist', () => {
  it('are a 422 on their field: revoked items since, coupon windows, key expiry', async () => {
    for (const stamp of ['2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-32T00:00:00Z', '2026-02-30T00:00:00Z']) {
      const since = await call(`/admin/revoked-items?since=${stamp}`, { admin: true });
      expectError(since, 422, 'VALIDATION_FAILED');
      expect(Object.keys(since.json.errors)).toEqual(['since']);
      for (const field of ['starts_at', 'expires_at']) {
        const coupon = await call('/admin/coupons', { admin: true, body: { code: `DAY-${Math.random().toString(36).slice(2, 8)}`, percent_off: 5, [field]: stamp } });
        expectError(coupon, 422, 'VALIDATION_FAILED');
        expect(Object.keys(coupon.json.errors)).toEqual([field]);
      }
      const user = await newUser();
      const key = await call('/api-keys', { key: user.key, body: { name: 'dated', expires_at: stamp.replace('2026', '2030') } });
      expectError(key, 422, 'VALIDATION_FAILED');
      expect(Object.keys(key.json.errors)).toEqual(['expires_at']);
    }
  });
});
