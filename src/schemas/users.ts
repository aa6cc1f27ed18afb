import { z } from '@hono/zod-openapi';
import { emailAddress, humanLine, withConfirmation } from '../lib/validation';

// Request schemas of users and their passwords, shared by the API (src/routes/) and the dashboard (src/dashboard/).

export const userName = humanLine('name', 100);
export const userEmail = emailAddress('email');

export const CreateUserBody = z.object({
  name: userName,
  email: userEmail,
  password: z.string().min(8, 'password must be at least 8 characters').max(200, 'password is too long'),
});

/** A referrer's code as typed: 16 hex digits, any letter case (src/services/referrals/codes.ts). */
export const referralCode = z
  .string('referral_code must be a string')
  .regex(/^\s*[0-9A-Fa-f]{16}\s*$/, 'No user has this referral code.')
  .openapi({ description: "a referrer's code (16 hex digits): the new user is recorded as referred by them; a code nobody has → 422" });

/** The operator's creation: a user, optionally brought by a referrer. */
export const CreateUserWithReferralBody = CreateUserBody.extend({ referral_code: referralCode.nullable().optional() });

export const UpdateProfileBody = z.object({
  name: userName.optional(),
  email: userEmail.optional(),
  /** false: no order receipts or deposit notices by email (security notices are always sent). */
  email_receipts: z.boolean('email_receipts must be a boolean').optional(),
  /** Needed to change the email with a restricted API key, and in the dashboard (src/services/accounts/users.ts). */
  current_password: z
    .string('current_password must be a string')
    .max(200, 'current_password is too long')
    .optional()
    .openapi({
      description:
        'Required to change `email` with a restricted API key (fewer than all six scopes, a spend limit, allowed IPs or an expiry); missing or wrong → 422. Checks count with those of POST /user/password (5 a minute).',
    }),
});

const newPassword = z.string().min(8, 'new_password must be at least 8 characters').max(200, 'new_password is too long');

export const ChangePasswordBody = withConfirmation(
  z.object({
    current_password: z.string().min(1, 'current_password is required'),
    new_password: newPassword,
    new_password_confirmation: z.string(),
  }),
  'new_password',
  'new_password_confirmation',
  'new_password',
);

/** A password reset link's form: the same rules, without the current password. */
export const ResetPasswordBody = withConfirmation(
  z.object({ new_password: newPassword, new_password_confirmation: z.string() }),
  'new_password',
  'new_password_confirmation',
  'new_password',
);
