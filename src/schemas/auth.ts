import { z } from '@hono/zod-openapi';
import { userEmail } from './users';

// Request schemas of the public account routes (the API and the dashboard's forms).

export const ForgotPasswordBody = z.object({ email: userEmail });
