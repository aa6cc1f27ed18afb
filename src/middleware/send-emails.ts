import type { Context } from 'hono';
import { resilient } from '../db/d1';
import type { AppEnv } from '../env';
import { publicBaseUrl } from '../lib/public-base-url';
import { enqueueEmails } from '../services/mail/outbox';
import { readMailSettings, type Mail } from '../services/mail/settings';
import { runAfterResponse } from './after-response';

/**
 * What a route hands to a service whose effect sends email, or undefined while mail is off (then the service records
 * nothing). Committed emails are enqueued after the response (waitUntil), like events.
 */
export function mailFor(c: Context<AppEnv>): Mail | undefined {
  const settings = readMailSettings(c.env);
  // The sandbox sends no email (docs/test-mode.md): a test key's request records none.
  if (!settings || c.var.mode === 'test') return undefined;
  return {
    settings,
    // Never the request's origin: its Host header is the client's to choose.
    origin: publicBaseUrl(c.env),
    send: (jobs) => {
      if (jobs.length > 0) runAfterResponse(c, enqueueEmails(resilient(c.env.DB), c.env.EMAIL_QUEUE, jobs));
    },
  };
}
