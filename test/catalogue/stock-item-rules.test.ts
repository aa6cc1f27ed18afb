import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import { newOperator } from '../console-helpers';
import { freshIp, ORIGIN } from '../dashboard-helpers';
import { call, expectError, newProduct } from '../helpers';

// One validator for a stock item, whichever way it arrives: the admin API (JSON or text/plain) and the console's
// upload (its textarea and its file) refuse the same items, with the same length rule. The admin API used to accept
// an item with a NUL byte that the console refused.

const stockOf = async (productId: number) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'").bind(productId).first<{ n: number }>())!.n;

const apiJson = (productId: number, items: string[]) => call(`/admin/products/${productId}/stock`, { admin: true, body: { items } });
const apiText = (productId: number, text: string) =>
  call(`/admin/products/${productId}/stock`, { admin: true, method: 'POST', body: text, headers: { 'Content-Type': 'text/plain' } });

async function consoleUpload(productId: number, cookie: string, fields: Record<string, string | File>) {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  const res = await SELF.fetch(`${ORIGIN}/dashboard/console/products/${productId}/stock`, {
    method: 'POST',
    body,
    headers: { Cookie: `dashboard_session=${cookie}`, Origin: ORIGIN, 'CF-Connecting-IP': freshIp() },
    redirect: 'manual',
  });
  return { status: res.status, text: await res.text() };
}

const REFUSED = {
  nul: 'CODE-\u0000-1',
  escape: 'CODE-\u001b[31m-1',
  del: 'CODE-\u007f-1',
  c1: 'CODE-\u0085-1',
  verticalTab: 'CODE-\u000b-1',
  tooLong: `L${'x'.repeat(4096)}`,
};

describe('a stock item with a control character, or longer than 4,096 characters', () => {
  for (const [name, item] of Object.entries(REFUSED)) {
    it(`(${name}) is refused by the admin API, as JSON and as text, and by the console, as text and as a file`, async () => {
      const product = await newProduct({ price: 1 });
      const json = await apiJson(product.id, ['GOOD-1', item]);
      expectError(json, 422, 'VALIDATION_FAILED');
      expect(json.json.errors.items).toHaveLength(1);
      expectError(await apiText(product.id, `GOOD-1\n${item}\n`), 422, 'VALIDATION_FAILED');
      const operator = await newOperator();
      const typed = await consoleUpload(product.id, operator.cookie, { items: `GOOD-1\n${item}` });
      expect(typed.status, typed.text.slice(0, 200)).toBe(422);
      expect(typed.text).toContain(json.json.errors.items[0].replace(/'/g, '&#39;'));
      const file = await consoleUpload(product.id, operator.cookie, { items_file: new File([`GOOD-1\n${item}\n`], 'codes.txt', { type: 'text/plain' }) });
      expect(file.status).toBe(422);
      expect(await stockOf(product.id)).toBe(0);
    });
  }
});

describe('an item with fields (login:password)', () => {
  it('is taken by both paths, exactly 4,096 characters too, and a tab between fields is refused by both', async () => {
    const product = await newProduct({ price: 1 });
    const longest = `L${'x'.repeat(4095)}`;
    expect((await apiJson(product.id, ['user-1:pass-1', longest])).status).toBe(201);
    const operator = await newOperator();
    const typed = await consoleUpload(product.id, operator.cookie, { items: 'user-2:pass-2' });
    expect(typed.status, typed.text.slice(0, 200)).toBe(303);
    expect((await apiJson(product.id, ['user-3\tpass-3'])).status).toBe(422);
    expect((await consoleUpload(product.id, operator.cookie, { items: 'user-4\tpass-4' })).status).toBe(422);
    expect(await stockOf(product.id)).toBe(3);
  });
});
