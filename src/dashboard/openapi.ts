import { z } from '@hono/zod-openapi';
import { errorResponses, pathId, type createRouter } from '../routes/openapi';

// The dashboard in the OpenAPI document, as the other pages beside the API are: every status each page and form
// answers, so that the service's every response is described (and the test suite checks it).

type App = ReturnType<typeof createRouter>;
type Status = 200 | 303 | 400 | 401 | 403 | 404 | 409 | 422 | 429 | 500 | 503;

const html = { 'text/html': { schema: { type: 'string' as const } } };

const RESPONSES: Record<Status, { description: string; content?: typeof html; headers?: Record<string, { schema: { type: 'string' } }> }> = {
  200: { description: 'The page', content: html },
  303: {
    description: 'Done, or not signed in: see Location (a signed-out browser is sent to /dashboard/sign-in?next=<path>)',
    headers: { Location: { schema: { type: 'string' } } },
  },
  400: { description: 'The page again with the refusal of the API (INSUFFICIENT_BALANCE, API_KEY_LIMIT_REACHED, ...)', content: html },
  401: { description: 'Wrong email or password (the same page for an unknown email)', content: html },
  403: { description: 'Form posted from another origin (CSRF)', content: html },
  404: { description: 'Unknown id, or another user\'s; sign-up when DASHBOARD_SIGNUP is not open', content: html },
  409: { description: 'The total changed since the review: the review again with the new total, nothing bought', content: html },
  422: { description: 'The page again with the API\'s message next to each invalid field', content: html },
  429: { description: 'Too many attempts (Retry-After)', content: html },
  500: { description: 'A bug: an error page quoting the request id', content: html },
  503: {
    description:
      'The database did not answer and nothing was changed: an error page; send the form again (Retry-After). "Ask the vendor": the payment provider did not answer, the deposits page again with the message',
    content: html,
    headers: { 'Retry-After': { schema: { type: 'string' } } },
  },
};

const responses = (...statuses: Status[]) => ({
  ...errorResponses(),
  ...Object.fromEntries([...statuses, 500, 503].map((status) => [status, RESPONSES[status as Status]])),
});

const form = (fields: string[], multipart = false) => ({
  required: true,
  content: {
    [multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded']: {
      schema: { type: 'object' as const, properties: Object.fromEntries(fields.map((name) => [name, { type: 'string' as const }])) },
    },
  },
});

/** A password reset link's token: 256 random bits, URL-safe base64. */
const tokenParam = z.string().openapi({ param: { name: 'token', in: 'path' }, pattern: '^[A-Za-z0-9_-]{43}$' });
/** A console export's file name. */
const fileParam = z.enum(['orders.csv', 'deposits.csv', 'transactions.csv']).openapi({ param: { name: 'file', in: 'path' } });
const slotParam = z.enum(['gateway_one', 'gateway_two', 'gateway_three']).openapi({ param: { name: 'slot', in: 'path' } });
/** An email's id (`eml_` and 24 base62 characters; an operator alert's adds `_<kind>_<operator id>`). */
const emailIdParam = z.string().openapi({ param: { name: 'email_id', in: 'path' }, pattern: '^eml_[A-Za-z0-9]{24}(_[a-z_]{1,40}_[0-9]{1,15})?$' });
/** An item's 0-based index in its order. */
const indexParam = z.string().openapi({ param: { name: 'index', in: 'path' }, type: 'integer', minimum: 0, maximum: 9999 });
const PATH_PARAMS: Record<string, z.ZodType> = { token: tokenParam, file: fileParam, slot: slotParam, email_id: emailIdParam, index: indexParam };
const pathParam = (name: string) => PATH_PARAMS[name] ?? pathId(name);
const params = (names: string[]) => (names.length === 0 ? {} : { params: z.object(Object.fromEntries(names.map((name) => [name, pathParam(name)]))) });
const pageNumber = z.string().optional().openapi({ type: 'integer', minimum: 1 });
const pageQuery = { query: z.object({ page: pageNumber }) };
const searchQuery = { query: z.object({ q: z.string().optional().openapi({ maxLength: 254 }), page: pageNumber }) };
/** The console lists' range of UTC days (inclusive). */
const dayRange = {
  from: z.string().optional().openapi({ format: 'date', description: 'the first UTC day included (YYYY-MM-DD)' }),
  to: z.string().optional().openapi({ format: 'date', description: 'the last UTC day included (YYYY-MM-DD)' }),
};

interface Entry {
  method: 'get' | 'post';
  path: string;
  summary: string;
  statuses: Status[];
  fields?: string[];
  paged?: boolean;
  /** `q` and `page` in the query. */
  search?: boolean;
  /** The form posts multipart/form-data (a file field). */
  multipart?: boolean;
  /** Query parameters beside `page`. */
  query?: z.ZodObject;
  /** A response other than an HTML page for 200. */
  ok?: Record<string, { schema: { type: 'string' } }>;
}

const COUPON_FIELDS = ['percent_off', 'amount_off', 'min_total', 'starts_at', 'expires_at', 'max_redemptions', 'max_per_user', 'product_ids', 'active'];

const PAGES: Entry[] = [
  { method: 'get', path: '/dashboard', summary: 'Overview: balance, totals, recent orders and transactions', statuses: [200, 303] },
  { method: 'get', path: '/dashboard/sign-in', summary: 'Sign-in page (says so when the browser\'s session has ended)', statuses: [200] },
  { method: 'post', path: '/dashboard/sign-in', summary: 'Sign in (sets the session cookie)', statuses: [303, 401, 403, 422, 429], fields: ['email', 'password'] },
  { method: 'get', path: '/dashboard/sign-up', summary: 'Sign-up page (DASHBOARD_SIGNUP=open)', statuses: [200, 404] },
  {
    method: 'post',
    path: '/dashboard/sign-up',
    summary: 'Create an account and sign in; `referral_code` (or the cookie /r/<code> left) records who brought it (a typed code nobody has: 422)',
    statuses: [303, 403, 404, 422, 429],
    fields: ['name', 'email', 'password', 'password_confirmation', 'referral_code'],
  },
  { method: 'post', path: '/dashboard/sign-out', summary: 'Sign out (ends the session)', statuses: [303, 403] },
  { method: 'get', path: '/dashboard/keys', summary: 'API keys', statuses: [200, 303] },
  {
    method: 'post',
    path: '/dashboard/keys',
    summary: 'Create an API key (shown once, in this answer; the same form sent again creates none and says so)',
    statuses: [200, 303, 400, 403, 422],
    fields: ['name', 'idempotency_key'],
  },
  { method: 'post', path: '/dashboard/keys/{id}/revoke', summary: 'Revoke an API key', statuses: [303, 403, 404] },
  { method: 'get', path: '/dashboard/referrals', summary: 'Your referral link, balances and earnings, and "Move to wallet"', statuses: [200, 303, 422], paged: true },
  {
    method: 'post',
    path: '/dashboard/referrals/transfer',
    summary: 'Move to wallet (as POST /user/referral/transfer), once per idempotency_key, then 303 to the page with a notice; too little available → 400, the page with the message; no idempotency_key → 422',
    statuses: [303, 400, 403, 422],
    fields: ['idempotency_key'],
  },
  { method: 'get', path: '/dashboard/wallet', summary: 'Balance, transactions and deposits', statuses: [200, 303, 422], paged: true },
  {
    method: 'post',
    path: '/dashboard/wallet/deposit',
    summary: 'Add funds: creates a deposit, then 303 to its payment page; the payment provider unreachable → 503, the page again with its message and the typed amount, nothing stored',
    statuses: [303, 403, 422, 503],
    fields: ['amount', 'gateway', 'crypto_currency', 'idempotency_key'],
  },
  {
    method: 'get',
    path: '/dashboard/wallet/deposits/{id}',
    summary: "Where a checkout sends the buyer back: 303 to the order the deposit bought, else to the wallet saying what became of the deposit",
    statuses: [303, 404],
  },
  {
    method: 'post',
    path: '/dashboard/shop/{id}/pay',
    summary: 'The review\'s "Pay $X and buy": a deposit of what the balance lacks that buys the reviewed order when credited; 303 to the payment page',
    statuses: [200, 303, 400, 403, 404, 409, 422, 429, 503],
    fields: ['amount', 'gateway', 'quantity', 'coupon', 'expected_total', 'idempotency_key'],
  },
  { method: 'get', path: '/dashboard/orders', summary: 'Orders', statuses: [200, 303, 422], paged: true },
  {
    method: 'get',
    path: '/dashboard/orders/{id}',
    summary: 'An order with its delivered items',
    statuses: [200, 303, 404],
    query: z.object({
      notice: z.string().optional().openapi({
        description:
          'After Buy (`charged`), Cancel (`refunded`) or Report a problem (`reported`, shown while a claim of the order is open): a one-line notice, worded from the order as stored; any other value shows none',
      }),
    }),
  },
  {
    method: 'get',
    path: '/dashboard/orders/{id}/export',
    summary: 'The order\'s items as a text file (as the API\'s export)',
    statuses: [303, 404],
    ok: { 'text/plain': { schema: { type: 'string' } } },
  },
  {
    method: 'get',
    path: '/dashboard/orders/{id}/cancel/confirm',
    summary: 'Confirmation of "Cancel order": the refund in words, "Confirm" and "Back"; changes nothing (an order that cannot be cancelled: 303 to it)',
    statuses: [200, 303, 404],
  },
  { method: 'post', path: '/dashboard/orders/{id}/cancel', summary: 'Cancel a pending order', statuses: [303, 400, 403, 404, 422], fields: ['idempotency_key'] },
  {
    method: 'post',
    path: '/dashboard/orders/{id}/items/{index}/report',
    summary: 'Report a problem with a delivered item within its warranty, then 303 to the order; a refusal (past the warranty, already reported) is the order page with it',
    statuses: [303, 403, 404, 409, 422],
    fields: ['reason'],
  },
  {
    method: 'get',
    path: '/dashboard/shop',
    summary: 'Active products as cards; `category` and `q` (a part of the name) filter them',
    statuses: [200, 303, 422],
    query: z.object({ category: z.string().optional(), q: z.string().optional(), page: pageNumber }),
  },
  { method: 'get', path: '/dashboard/shop/{id}', summary: 'A product: image, description, price, stock, pack sizes, final sale', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/shop/{id}/review',
    summary: 'Review a purchase: quantity, unit price, discount, total, and "Confirm purchase" (buys nothing); a refusal of the purchase (pack size, stock, coupon) is the product page again',
    statuses: [200, 303, 400, 403, 404, 422],
    fields: ['product_id', 'quantity', 'coupon', 'idempotency_key'],
  },
  {
    method: 'post',
    path: '/dashboard/shop',
    summary: 'Buy ("Confirm purchase" of the review)',
    statuses: [303, 400, 403, 404, 409, 422],
    fields: ['product_id', 'quantity', 'expected_total', 'idempotency_key'],
  },
  { method: 'get', path: '/dashboard/profile', summary: 'Profile, billing details and password', statuses: [200, 303] },
  {
    method: 'post',
    path: '/dashboard/billing',
    summary: 'Save the billing details (PUT /user/billing), then 303 to the profile with a notice',
    statuses: [303, 403, 422],
    fields: ['name', 'company', 'address', 'country', 'vat_id'],
  },
  {
    method: 'get',
    path: '/dashboard/documents',
    summary: 'Invoices, receipts and credit notes, newest first (`type` filters)',
    statuses: [200, 303, 422],
    query: z.object({ page: pageNumber, type: z.enum(['invoice', 'receipt', 'credit_note']).optional() }),
  },
  { method: 'get', path: '/dashboard/documents/{id}', summary: 'A document as a page that prints to PDF (A4)', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/profile',
    summary: 'Update name, email and "Email me receipts" (email changes: 5 a minute per user)',
    statuses: [303, 403, 422, 429],
    fields: ['name', 'email', 'email_receipts'],
  },
  {
    method: 'post',
    path: '/dashboard/password',
    summary: 'Change the password (ends the other sessions; 5 checks of the current password a minute per user)',
    statuses: [303, 403, 422, 429],
    fields: ['current_password', 'new_password', 'new_password_confirmation'],
  },
  { method: 'get', path: '/dashboard/forgot-password', summary: '"Forgot password?": the form (without email: ask the operator)', statuses: [200] },
  {
    method: 'post',
    path: '/dashboard/forgot-password',
    summary: 'Email a reset link: the same page and sentence whether or not the account exists (10 a minute per client IP)',
    statuses: [200, 403, 422, 429],
    fields: ['email'],
  },
  { method: 'get', path: '/dashboard/verify-email/{token}', summary: 'An email verification link: confirms the address (404 once used, expired or for another address)', statuses: [200, 404] },
  { method: 'post', path: '/dashboard/verify-email/resend', summary: 'Resend verification email (3 an hour), then 303 to the profile', statuses: [303, 403] },
  { method: 'get', path: '/dashboard/reset-password/{token}', summary: 'A password reset link, from an operator or an email (404 once used or expired)', statuses: [200, 404] },
  {
    method: 'post',
    path: '/dashboard/reset-password/{token}',
    summary: 'Set the password through a reset link: ends every session of the user, then 303 to sign-in',
    statuses: [303, 403, 404, 422],
    fields: ['new_password', 'new_password_confirmation'],
  },
  // The operator console: an operator's session only (404 to any other signed-in user).
  { method: 'get', path: '/dashboard/console', summary: 'Console overview: sales chart, low stock, mismatches, pending deposits, failing endpoints', statuses: [200, 303, 404] },
  { method: 'get', path: '/dashboard/console/products', summary: 'Every product, and the new product form', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/console/products',
    summary: 'Create a product, then 303 to its page',
    statuses: [303, 403, 404, 422],
    fields: ['name', 'sku', 'category', 'price', 'allowed_quantities', 'volume_prices', 'active', 'final_sale', 'warranty_hours', 'description', 'idempotency_key'],
  },
  { method: 'get', path: '/dashboard/console/products/{id}', summary: 'A product: edit form and stock upload', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/console/products/{id}',
    summary: 'Save a product',
    statuses: [303, 403, 404, 422],
    fields: ['name', 'sku', 'category', 'price', 'allowed_quantities', 'volume_prices', 'active', 'final_sale', 'warranty_hours', 'description'],
  },
  {
    method: 'post',
    path: '/dashboard/console/products/{id}/image',
    summary: 'Upload the product\'s image (multipart `image`: PNG, JPEG or WebP, at most 2 MB), then 303 to the product',
    statuses: [303, 403, 404, 422],
    multipart: true,
    fields: ['image'],
  },
  { method: 'get', path: '/dashboard/console/products/{id}/image/remove/confirm', summary: 'Confirmation of "Remove image"; changes nothing', statuses: [200, 303, 404] },
  { method: 'post', path: '/dashboard/console/products/{id}/image/remove', summary: 'Remove the product\'s image ("Confirm")', statuses: [303, 403, 404] },
  {
    method: 'get',
    path: '/dashboard/console/products/{id}/items/{item_id}/delete/confirm',
    summary: 'Confirmation of "Delete" of an unsold item; changes nothing (an item no longer unsold: 303 to the product)',
    statuses: [200, 303, 404],
  },
  {
    method: 'post',
    path: '/dashboard/console/products/{id}/items/{item_id}/delete',
    summary: 'Delete the unsold item ("Confirm"), audited, then 303 to the product saying whether it was deleted (a sold item never is)',
    statuses: [303, 403, 404],
    fields: ['idempotency_key'],
  },
  {
    method: 'post',
    path: '/dashboard/console/products/{id}/stock',
    summary: 'Upload stock (multipart: `items` text and/or an `items_file` .txt), then 303 to the product with the counts',
    statuses: [303, 403, 404, 422],
    multipart: true,
    fields: ['items', 'items_file', 'idempotency_key'],
  },
  {
    method: 'get',
    path: '/dashboard/console/orders',
    summary: 'Orders of every user; `q`: an order-number prefix, part of an email or of a product name; `from`/`to`: UTC days',
    statuses: [200, 303, 404, 422],
    query: z.object({ q: z.string().optional().openapi({ maxLength: 254 }), page: pageNumber, status: z.string().optional(), user_id: z.string().optional(), ...dayRange }),
  },
  { method: 'get', path: '/dashboard/console/orders/{id}', summary: 'An order with its items and its user', statuses: [200, 303, 404] },
  {
    method: 'get',
    path: '/dashboard/console/orders/{id}/cancel/confirm',
    summary: 'Confirmation of "Cancel order": the refund and whose wallet, "Confirm" and "Back"; changes nothing (an order no longer pending: 303 to it)',
    statuses: [200, 303, 404],
  },
  {
    method: 'post',
    path: '/dashboard/console/orders/{id}/cancel',
    summary: "An operator's cancel: the buyer's cancel (refund, items revoked, event) with an audit entry; a refusal shows the order again (400)",
    statuses: [303, 400, 403, 404, 422],
    fields: ['idempotency_key'],
  },
  {
    method: 'get',
    path: '/dashboard/console/users',
    summary: 'Users; `q`: an email or part of a name or email; `on_hold=1`: only the accounts on hold',
    statuses: [200, 303, 404, 422],
    query: z.object({ q: z.string().optional().openapi({ maxLength: 254 }), page: pageNumber, on_hold: z.enum(['1']).optional() }),
  },
  { method: 'get', path: '/dashboard/console/users/{id}', summary: 'A user: balance, role, transactions, orders, deposits, actions', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/console/users/{id}/balance',
    summary: 'Adjust the balance, then 303 to the user',
    statuses: [303, 400, 403, 404, 422],
    fields: ['amount', 'description', 'idempotency_key'],
  },
  {
    method: 'post',
    path: '/dashboard/console/users/{id}/discount',
    summary: 'Set the user\'s discount percent (0..90), then 303 to the user',
    statuses: [303, 403, 404, 422],
    fields: ['discount_percent'],
  },
  {
    method: 'get',
    path: '/dashboard/console/users/{id}/balance/confirm',
    summary: 'Confirmation of "Adjust balance": the amount, whose wallet, the balance before and after; changes nothing (invalid fields: the user\'s page with the messages)',
    statuses: [200, 303, 404, 422],
    query: z.object({ amount: z.string().optional(), description: z.string().optional() }),
  },
  { method: 'get', path: '/dashboard/console/users/{id}/disable/confirm', summary: 'Confirmation of "Disable account"; changes nothing', statuses: [200, 303, 404] },
  { method: 'post', path: '/dashboard/console/users/{id}/disable', summary: 'Disable the account', statuses: [303, 403, 404] },
  { method: 'post', path: '/dashboard/console/users/{id}/enable', summary: 'Enable the account', statuses: [303, 403, 404] },
  { method: 'post', path: '/dashboard/console/users/{id}/password-reset', summary: 'A password reset link, shown once in this answer', statuses: [200, 303, 403, 404] },
  {
    method: 'get',
    path: '/dashboard/console/deposits',
    summary: 'Deposits with their gateway events and when their vendor was last asked; `status`, `gateway` filters',
    statuses: [200, 303, 404, 422],
    query: z.object({
      page: pageNumber,
      status: z.string().optional(),
      gateway: z.string().optional(),
      user_id: z.string().optional(),
      ...dayRange,
      asked: z.string().optional().openapi({ description: 'After "Ask the vendor": the deposit asked about (with `outcome`)' }),
      outcome: z.string().optional().openapi({
        description: 'After "Ask the vendor": `credited`, `closed`, `duplicate`, `amount_mismatch` or `in_progress`, shown as a fixed one-line notice; any other value shows none',
      }),
    }),
  },
  {
    method: 'get',
    path: '/dashboard/console/deposits/{id}/mark-paid/confirm',
    summary: 'Confirmation of "Mark paid": the amount and whose wallet, "Confirm" and "Back"; changes nothing (a deposit no longer pending: 303 to the deposits)',
    statuses: [200, 303, 404],
  },
  {
    method: 'post',
    path: '/dashboard/console/deposits/{id}/mark-paid',
    summary: 'Mark a deposit paid (Confirm on its confirmation page): credits once, keyed on the deposit; a second post credits nothing and says so',
    statuses: [303, 403, 404],
    fields: ['idempotency_key'],
  },
  {
    method: 'post',
    path: '/dashboard/console/deposits/{id}/refresh',
    summary:
      "Ask the vendor: the deposit's payment provider is asked and its answer applied (as POST /admin/deposits/{id}/refresh), then 303 to the deposits with a notice; " +
      'a generic slot\'s deposit → 422 and the vendor unreachable → 503, each the page again with its message, nothing changed',
    statuses: [303, 403, 404, 422, 503],
  },
  { method: 'get', path: '/dashboard/console/revoked-items', summary: 'Items of cancelled orders', statuses: [200, 303, 404, 422], paged: true },
  {
    method: 'get',
    path: '/dashboard/console/claims',
    summary: 'Warranty claims of one status (default open), each open one with Replace, Refund item and Reject',
    statuses: [200, 303, 404, 422],
    query: z.object({ status: z.enum(['open', 'replaced', 'refunded', 'rejected']).optional(), page: pageNumber }),
  },
  {
    method: 'get',
    path: '/dashboard/console/claims/{id}',
    summary: 'One claim: the buyer, the order, "Item 2 of 3", the reported item, earlier claims, and (open) Replace, Refund item and Reject',
    statuses: [200, 303, 404, 422],
  },
  ...(['replace', 'refund', 'reject'] as const).flatMap((action): Entry[] => [
    {
      method: 'post',
      path: `/dashboard/console/claims/{id}/${action}/confirm`,
      summary: `Confirm a claim's ${action} (changes nothing; posted, so a note never travels in a URL); a refusal is the claim page with it`,
      statuses: [200, 303, 403, 404, 422],
      ...(action === 'reject' ? { fields: ['note'] } : {}),
    },
    {
      method: 'post',
      path: `/dashboard/console/claims/{id}/${action}`,
      summary: `Resolve a claim (${action}, as POST /admin/claims/{id}/${action}), then 303 to the claim with a notice; a refusal is the claim page with it`,
      statuses: [303, 400, 403, 404, 409, 422],
      ...(action === 'reject' ? { fields: ['note'] } : {}),
    },
  ]),
  { method: 'get', path: '/dashboard/console/referrals', summary: 'The referral programme: its settings, the referrers and what each earned', statuses: [200, 303, 404, 422], paged: true },
  {
    method: 'post',
    path: '/dashboard/console/referrals/settings',
    summary: 'Save the referral settings (as PUT /admin/settings/referrals), then 303 to the page with a notice',
    statuses: [303, 403, 404, 422],
    fields: ['percent', 'hold_days', 'min_transfer'],
  },
  ...(['off', 'on'] as const).flatMap((state): Entry[] => [
    { method: 'get', path: `/dashboard/console/referrals/users/{id}/${state}/confirm`, summary: `Confirm switching the user's referrals ${state} (changes nothing)`, statuses: [200, 303, 404] },
    {
      method: 'post',
      path: `/dashboard/console/referrals/users/{id}/${state}`,
      summary: `Switch the user's referrals ${state}${state === 'off' ? ' (their earnings still held are reversed)' : ''}, then 303 to the page with a notice`,
      statuses: [303, 403, 404],
    },
  ]),
  { method: 'get', path: '/dashboard/console/blocklist', summary: 'Blocklist rules with their hits, and the form to add one', statuses: [200, 303, 404, 422], paged: true },
  { method: 'post', path: '/dashboard/console/blocklist', summary: 'Add a blocklist rule, then 303 to the list with a notice', statuses: [303, 403, 404, 422], fields: ['type', 'value', 'note'] },
  { method: 'post', path: '/dashboard/console/blocklist/{id}/remove', summary: 'Remove a blocklist rule, then 303 to the list', statuses: [303, 403, 404] },
  {
    method: 'get',
    path: '/dashboard/console/orders/{id}/refund/confirm',
    summary: 'Confirm a refund of part or all of the order (changes nothing); invalid fields: the order page with them',
    statuses: [200, 303, 404, 422],
    query: z.object({ amount: z.string().optional(), reason: z.string().optional() }),
  },
  {
    method: 'post',
    path: '/dashboard/console/orders/{id}/refund',
    summary: 'Refund part or all of an order (as POST /admin/orders/{id}/refund), once per idempotency_key, then 303 to the order with a notice',
    statuses: [303, 403, 404, 422],
    fields: ['amount', 'reason', 'idempotency_key'],
  },
  {
    method: 'get',
    path: '/dashboard/console/users/{id}/hold/confirm',
    summary: 'Confirm putting the account on hold (changes nothing)',
    statuses: [200, 303, 404],
    query: z.object({ reason: z.string().optional() }),
  },
  { method: 'post', path: '/dashboard/console/users/{id}/hold', summary: 'Put the account on hold, then 303 to the user with a notice', statuses: [303, 403, 404, 422], fields: ['reason'] },
  { method: 'get', path: '/dashboard/console/users/{id}/hold/lift/confirm', summary: 'Confirm lifting the hold (changes nothing)', statuses: [200, 303, 404] },
  { method: 'post', path: '/dashboard/console/users/{id}/hold/lift', summary: 'Lift the hold, then 303 to the user with a notice', statuses: [303, 403, 404] },
  { method: 'get', path: '/dashboard/console/audit', summary: 'The audit log; `from`/`to`: UTC days', statuses: [200, 303, 404, 422], query: z.object({ page: pageNumber, ...dayRange }) },
  {
    method: 'get',
    path: '/dashboard/console/emails',
    summary: 'Emails sent, queued and failed (filters: to, template, status)',
    statuses: [200, 303, 404, 422],
    query: z.object({ page: pageNumber, to: z.string().optional(), template: z.string().optional(), status: z.string().optional() }),
  },
  {
    method: 'get',
    path: '/dashboard/console/emails/{email_id}',
    summary: 'One email; with EMAIL_PREVIEW=true (local development only) its text and HTML as sent',
    statuses: [200, 303, 404],
  },
  { method: 'get', path: '/dashboard/console/coupons', summary: 'Every coupon, and the new coupon form', statuses: [200, 303, 404, 422], paged: true },
  {
    method: 'post',
    path: '/dashboard/console/coupons',
    summary: 'Create a coupon, then 303 to its page',
    statuses: [303, 403, 404, 422],
    fields: [...COUPON_FIELDS, 'code', 'idempotency_key'],
  },
  { method: 'get', path: '/dashboard/console/coupons/{id}', summary: 'A coupon: its redemptions and edit form', statuses: [200, 303, 404] },
  { method: 'post', path: '/dashboard/console/coupons/{id}', summary: 'Save a coupon (any field but its code)', statuses: [303, 403, 404, 422], fields: COUPON_FIELDS },
  { method: 'get', path: '/dashboard/console/payments', summary: 'Payment providers: each slot\'s provider, availability, last notification, lookup and vendor failure', statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/console/payments/{slot}/check',
    summary: 'Check connection: one harmless authenticated read at the slot\'s vendor, its answer shown on the payments page',
    statuses: [200, 303, 403, 404],
  },
  {
    method: 'get',
    path: '/dashboard/console/exports/{file}',
    summary: 'Export CSV: GET /api/v2/admin/exports/{file} for an operator\'s session (`from`/`to`: UTC days)',
    statuses: [200, 303, 404, 422],
    query: z.object(dayRange),
    ok: { 'text/csv': { schema: { type: 'string' } } },
  },
  {
    method: 'get',
    path: '/dashboard/console/documents',
    summary: 'Every document, newest first (type, buyer, UTC days), with the Export CSV link',
    statuses: [200, 303, 404, 422],
    query: z.object({ ...dayRange, page: pageNumber, type: z.enum(['invoice', 'receipt', 'credit_note']).optional(), user_id: z.string().optional() }),
  },
  { method: 'get', path: '/dashboard/console/documents/{id}', summary: 'Any document as a page that prints to PDF (A4)', statuses: [200, 303, 404] },
  { method: 'get', path: '/dashboard/console/invoicing', summary: "The seller's invoicing settings and their form", statuses: [200, 303, 404] },
  {
    method: 'post',
    path: '/dashboard/console/invoicing',
    summary: 'Save the invoicing settings (PUT /admin/settings/invoicing), then 303 with a notice',
    statuses: [303, 403, 404, 422],
    fields: ['legal_name', 'address', 'country', 'tax_id', 'tax_mode', 'vat_rates'],
  },
];

/** `post /dashboard/orders/{id}/cancel` → `browserPostDashboardOrdersByIdCancel` (apart from the API's ids). */
const operationIdOf = (method: string, path: string) =>
  'browser' +
  method[0].toUpperCase() +
  method.slice(1) +
  path
    .split(/[/-]/)
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? 'ById' : part[0].toUpperCase() + part.slice(1)))
    .join('');

export function registerDashboardDocs(app: App) {
  for (const entry of PAGES) {
    const pathParams = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    app.openAPIRegistry.registerPath({
      method: entry.method,
      path: entry.path,
      operationId: operationIdOf(entry.method, entry.path),
      tags: ['Dashboard'],
      summary: entry.summary,
      request: {
        ...params(pathParams),
        ...(entry.paged ? pageQuery : {}),
        ...(entry.search ? searchQuery : {}),
        ...(entry.query ? { query: entry.query } : {}),
        ...(entry.fields ? { body: form(entry.fields, entry.multipart) } : {}),
      },
      responses: { ...responses(...entry.statuses), ...(entry.ok ? { 200: { description: entry.summary, content: entry.ok } } : {}) },
    });
  }
}
