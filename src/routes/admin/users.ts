import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { TransactionRow } from '../../db/schema';
import type { AppEnv } from '../../env';
import { hmacSha256Hex, openSealed, sealText } from '../../lib/crypto';
import { envelope, ok } from '../../lib/envelope';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse } from '../openapi';
import { idempotent } from '../../middleware/idempotency';
import { disabledAlsoInSandbox } from '../../middleware/mode';
import { publishAfterResponse } from '../../middleware/publish-events';
import { AdjustmentBody, UpdateUserBody, USER_ROLES, UsersQuery } from '../../schemas/operator';
import { CreateUserWithReferralBody } from '../../schemas/users';
import { referredByValue } from '../../services/referrals/codes';
import { OPERATOR } from '../../services/idempotency';
import { createUser, type UserCreationSnapshot, type UserProfile } from '../../services/accounts/users';
import { adjustBalance } from '../../services/payments/wallet';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { presentTransaction, Transaction, discountPercent } from '../representations';
import { presentProfile, referredBy, UserProfileSchema } from '../accounts/user';
import { centsToAmount } from '../../lib/money';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { queryPlain } from '../../services/caller';
import { updateUser, usersQuery, userDetailQuery, type OperatorUser, type OperatorUserDetail } from '../../services/operator/users';
import { createPasswordReset, type ResetLink, type ResetLinkSnapshot } from '../../services/accounts/password-resets';

// Users for the operator (behind the admin token): create one with its first API key, credit or debit its wallet, list
// and read them, change their role, discount or access, and make a password reset link. Every write is on the audit
// log (src/services/accounts/audit-log.ts).

const security = [{ AdminBearer: [] }];
// Every admin POST/PATCH takes an Idempotency-Key in the operator's own key namespace.
const parameters = [idempotencyKeyParameter];
const asOperator = { owner: OPERATOR } as const;
const tags = ['Admin'];
const timestamp = z.string().openapi({ format: 'date-time' });

const OperatorUserSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    role: z.enum(USER_ROLES),
    disabled: z.boolean(),
    balance: z.number(),
    created_at: timestamp,
    discount_percent: discountPercent,
    on_hold: z.boolean().openapi({ description: 'true: deposits and purchases are refused (403 ACCOUNT_ON_HOLD) until the hold is lifted' }),
    hold_reason: z.string().nullable(),
    referred_by: referredBy,
  })
  .openapi('OperatorUser');

const OperatorUserDetailSchema = z.object({ ...OperatorUserSchema.shape, orders_count: z.number().int(), total_spent: z.number() }).openapi('OperatorUserDetail');

const presentUser = (u: OperatorUser) => ({
  id: u.id,
  name: u.name,
  email: u.email,
  role: u.role,
  disabled: u.disabledAt !== null,
  balance: centsToAmount(u.balanceCents),
  created_at: u.createdAt,
  discount_percent: u.discountPercent,
  on_hold: (u.heldAt ?? null) !== null,
  hold_reason: u.holdReason ?? null,
  referred_by: u.referredBy ?? null,
});

const presentUserDetail = (u: OperatorUserDetail) => ({ ...presentUser(u), orders_count: u.ordersCount, total_spent: centsToAmount(u.totalSpentCents) });

const ResetLinkSchema = z
  .object({
    url: z.string().openapi({ format: 'uri', description: '<origin>/dashboard/reset-password/<token>: shown once, works once, for 60 minutes' }),
    expires_at: timestamp,
  })
  .openapi('PasswordResetLink');

const emptyToUndefined = (q: string | undefined) => (q === '' ? undefined : q);


/**
 * The first API key of a user created under an Idempotency-Key (or a password reset link) is kept for its replay
 * sealed (AES-GCM) under the admin token and that Idempotency-Key: the database never holds it in clear, and only the operator who sent both reads it.
 * (A replay under another token never gets here: the request hash covers the password through an HMAC under the token.)
 */
export function operatorSealing(c: Context<AppEnv>, purpose: string) {
  const secret = `${c.env.ADMIN_TOKEN}\n${c.req.header('Idempotency-Key')}`;
  return {
    seal: (secretText: string) => sealText(secret, purpose, secretText),
    open: async (sealed: string) => {
      const secretText = await openSealed(secret, purpose, sealed);
      if (secretText === null) throw new Error(`The sealed ${purpose} of an idempotency record cannot be opened: the record was altered.`);
      return secretText;
    },
  };
}

export const adminUsersRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/users',
      operationId: 'createUser',
      tags,
      summary: 'Create a user and its first API key',
      security,
      parameters,
      request: { body: jsonBody(CreateUserWithReferralBody) },
      responses: {
        201: jsonResponse(envelope(UserProfileSchema.extend({ api_key: z.string() })), 'The user and its first key', idLinks('/data/id', { adjustBalance: 'id' })),
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const sealing = operatorSealing(c, 'admin-user-first-api-key');
      const created = (user: UserProfile, apiKey: string) => ({ status: 201 as const, body: ok({ ...presentProfile(user), api_key: apiKey }, 'User created.') });
      // The request is remembered by a hash; the password enters it only through an HMAC under the admin token.
      const request = { ...body, password: await hmacSha256Hex(c.env.ADMIN_TOKEN ?? '', body.password) };
      return idempotent(
        c,
        request,
        async (claim) => {
          const referrer = referredByValue(body.referral_code, body.email, true);
          const { user, apiKey } = await createUser(c.var.db, ADMIN_TOKEN_ACTOR, body, claim && { claim, seal: sealing.seal }, referrer);
          return created(user, apiKey);
        },
        { ...asOperator, render: async (snapshot) => created(snapshot as UserProfile, await sealing.open((snapshot as UserCreationSnapshot).sealedApiKey)) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/users/{id}/balance-adjustments',
      operationId: 'adjustBalance',
      tags,
      summary: 'Credit (positive) or debit (negative) a wallet',
      security,
      parameters,
      request: { params: IdParams, body: jsonBody(AdjustmentBody) },
      responses: { 201: jsonResponse(envelope(Transaction), 'The adjustment transaction'), ...errorResponses(400, 401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const adjusted = (transaction: TransactionRow) => ({ status: 201 as const, body: ok(presentTransaction(transaction), 'Balance adjusted.') });
      return idempotent(
        c,
        body,
        async (claim) => adjusted(await adjustBalance(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, body.amount, body.description, claim, publishAfterResponse(c))),
        { ...asOperator, render: (snapshot) => adjusted(snapshot as TransactionRow) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/users',
      operationId: 'listUsers',
      tags,
      summary: 'Users, newest first; `q`: part of a name or email; `email`: exactly that address',
      security,
      request: { query: UsersQuery },
      responses: { 200: jsonResponse(pagedEnvelope(OperatorUserSchema), 'A page of users'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { q, email, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [usersQuery({ q: emptyToUndefined(q), email }, page)]);
      return c.json(paged(rows.map(presentUser), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/users/{id}',
      operationId: 'getUser',
      tags,
      summary: 'A user with orders count and total spent',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(OperatorUserDetailSchema), 'The user'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const [user] = await queryPlain(c.var.db, [userDetailQuery(c.req.valid('param').id)]);
      return c.json(ok(presentUserDetail(user)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/users/{id}',
      operationId: 'updateUser',
      tags,
      summary: 'Change a user: name, email, role (`operator` opens the console), disabled (refused everywhere, nothing deleted)',
      security,
      parameters: [idempotencyKeyParameter],
      request: { params: IdParams, body: jsonBody(UpdateUserBody) },
      responses: { 200: jsonResponse(envelope(OperatorUserDetailSchema), 'The user'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const updated = (user: OperatorUserDetail) => ({ status: 200 as const, body: ok(presentUserDetail(user), 'User updated.') });
      return idempotent(
        c,
        body,
        async (claim) => updated(await disabledAlsoInSandbox(c, body, await updateUser(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, body, claim))),
        { owner: OPERATOR, render: (snapshot) => updated(snapshot as OperatorUserDetail) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/users/{id}/password-reset',
      operationId: 'createPasswordReset',
      tags,
      summary: 'A password reset link for the user (shown once; one use within 60 minutes; ends all their sessions)',
      security,
      parameters: [idempotencyKeyParameter],
      request: { params: IdParams },
      responses: { 201: jsonResponse(envelope(ResetLinkSchema), 'The link'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      // A replay answers the same link: the record keeps it sealed under the admin token and the Idempotency-Key.
      const sealing = operatorSealing(c, 'password-reset-link');
      const created = (link: ResetLink) => ({ status: 201 as const, body: ok({ url: link.url, expires_at: link.expiresAt }, 'Password reset link created.') });
      return idempotent(
        c,
        {},
        async (claim) =>
          created(await createPasswordReset(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, new URL(c.req.url).origin, claim && { claim, seal: sealing.seal })),
        {
          owner: OPERATOR,
          render: async (snapshot) => {
            const { sealedUrl, expiresAt } = snapshot as ResetLinkSnapshot;
            return created({ url: await sealing.open(sealedUrl), expiresAt });
          },
        },
      );
    },
  );
