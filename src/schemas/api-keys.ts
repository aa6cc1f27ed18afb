import { z } from '@hono/zod-openapi';
import { trimmedText } from '../lib/validation';

// Request schemas of API keys, shared by the API and the dashboard's keys page.

export const CreateApiKeyBody = z.object({
  name: trimmedText('name', 100),
});
