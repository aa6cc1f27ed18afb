import { createRoute } from '@hono/zod-openapi';
import { messageEnvelope } from '../../lib/envelope';
import { clientIp, enforceRateLimit } from '../../middleware/rate-limit';
import { mailFor } from '../../middleware/send-emails';
import { ForgotPasswordBody } from '../../schemas/auth';
import { FORGOT_PASSWORD_ANSWER, requestPasswordReset } from '../../services/accounts/forgot-password';
import { createRouter, errorResponses, jsonBody, jsonResponse } from '../openapi';

// Public account routes: no credential. The answer never tells whether an account exists.

export const authRouter = createRouter().openapi(
  createRoute({
    method: 'post',
    path: '/forgot-password',
    operationId: 'forgotPassword',
    tags: ['Auth'],
    summary: 'Email a password reset link (10 posts a minute per client IP; 3 reset emails an hour per address)',
    description:
      'The same 202 answer whether or not an account exists for the address. For an existing, enabled account a reset ' +
      'link (one use, 60 minutes, ends every session) is emailed, at most 3 an hour per address; more are silently not ' +
      'sent. Nothing is sent while the shop has no email configured.',
    request: { body: jsonBody(ForgotPasswordBody) },
    responses: { 202: jsonResponse(messageEnvelope, 'Accepted'), ...errorResponses(422, 429) },
  }),
  async (c) => {
    await enforceRateLimit(c.env.FORGOT_PASSWORD_IP_RATE_LIMITER, `ip:${clientIp(c)}`);
    await requestPasswordReset(c.var.db, c.req.valid('json').email, mailFor(c));
    return c.json({ success: true as const, message: FORGOT_PASSWORD_ANSWER }, 202);
  },
);
