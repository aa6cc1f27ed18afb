import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { emailChangeThrottle, passwordCheckThrottle } from '../../middleware/rate-limit';
import { mailFor } from '../../middleware/send-emails';
import { createRouter, errorResponses, jsonBody, jsonResponse, needsScope } from '../openapi';
import { ChangePasswordBody, UpdateProfileBody } from '../../schemas/users';
import { changePassword, getDashboard, getProfile, updateProfile, type UserProfile } from '../../services/accounts/users';
import { discountPercent, Order, presentOrder, presentTransaction, Transaction } from '../representations';

export const referredBy = z.string().nullable().openapi({ description: "the referral code of the user who brought this one (recorded at sign-up), or null" });

export const UserProfileSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    balance: z.number().min(0).openapi({ example: 25.5 }),
    created_at: z.string().openapi({ format: 'date-time' }),
    discount_percent: discountPercent,
    referred_by: referredBy,
  })
  .openapi('UserProfile');

/** The user's own profile: the admin's view of a user, and the email settings. */
const OwnProfileSchema = UserProfileSchema.extend({
  email_receipts: z.boolean().openapi({ description: 'Whether order receipts and deposit notices are emailed' }),
  email_verified: z.boolean().openapi({ description: 'false only while a sign-up awaits its verification link' }),
  on_hold: z.boolean().openapi({
    description: 'true while the shop holds the account (a reversed payment, or the operator): deposits and purchases answer 403 ACCOUNT_ON_HOLD until it is lifted; reads work',
  }),
}).openapi('OwnProfile');

export const presentProfile = (u: UserProfile) => ({
  id: u.id,
  name: u.name,
  email: u.email,
  balance: centsToAmount(u.balanceCents),
  created_at: u.createdAt,
  discount_percent: u.discountPercent,
  referred_by: u.referredBy ?? null,
});

const presentOwnProfile = (u: UserProfile) => ({
  ...presentProfile(u),
  email_receipts: u.emailReceipts === 1,
  email_verified: u.emailVerified === 1,
  on_hold: (u.heldAt ?? null) !== null,
});

const Dashboard = z
  .object({
    balance: z.number().min(0),
    total_orders: z.number().int(),
    total_spent: z.number(),
    pending_orders: z.number().int(),
    recent_orders: z.array(Order),
    recent_transactions: z.array(Transaction),
  })
  .openapi('Dashboard');

const tags = ['User'];

export const userRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/profile',
      operationId: 'getProfile',
      tags,
      summary: 'Get the user profile',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(OwnProfileSchema), 'The profile'), ...errorResponses(401, 429) },
    }),
    async (c) => c.json(ok(presentOwnProfile(await getProfile(c.var.db, c.var.caller))), 200),
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/profile',
      operationId: 'updateProfile',
      tags,
      summary:
        'Update name, email and/or email_receipts (email changes: 5 a minute per user, 429 beyond; with a restricted key, current_password; a blocked address, old or new, 403 BLOCKED; with a test key the email is read-only, 422)',
      ...needsScope('account'),
      request: { body: jsonBody(UpdateProfileBody) },
      responses: { 200: jsonResponse(envelope(OwnProfileSchema), 'Updated'), ...errorResponses(401, 403, 422, 429) },
    }),
    async (c) => {
      const throttles = { emailChange: emailChangeThrottle(c), passwordCheck: passwordCheckThrottle(c) };
      const profile = await updateProfile(c.var.db, c.var.caller, c.req.valid('json'), throttles, mailFor(c), { emailReadOnly: c.var.mode === 'test' });
      return c.json(ok(presentOwnProfile(profile), 'Profile updated.'), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/password',
      operationId: 'changePassword',
      tags,
      summary: 'Change the password (5 checks of the current password a minute per user, 429 beyond)',
      ...needsScope('account'),
      request: { body: jsonBody(ChangePasswordBody) },
      responses: { 200: { description: 'Changed; empty body' }, ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      await changePassword(c.var.db, c.var.caller, { current: body.current_password, next: body.new_password }, passwordCheckThrottle(c), mailFor(c));
      return c.body(null, 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/dashboard',
      operationId: 'getDashboard',
      tags,
      summary: 'Balance and order statistics',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(Dashboard), 'Statistics'), ...errorResponses(401, 429) },
    }),
    async (c) => {
      const d = await getDashboard(c.var.db, c.var.caller);
      return c.json(
        ok({
          balance: centsToAmount(d.balanceCents),
          total_orders: d.totalOrders,
          total_spent: centsToAmount(d.totalSpentCents),
          pending_orders: d.pendingOrders,
          recent_orders: d.recentOrders.map(presentOrder),
          recent_transactions: d.recentTransactions.map(presentTransaction),
        }),
        200,
      );
    },
  );
