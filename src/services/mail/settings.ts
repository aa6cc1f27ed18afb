import { readConfig, type Bindings } from '../../env';
import { publicBaseUrl } from '../../lib/public-base-url';
import type { EmailJob } from './outbox';

// Whether the shop sends email, and what a service needs to record one in its batch. Mail is on only with both the
// EMAIL binding and EMAIL_FROM: otherwise nothing is recorded, nothing is sent, and every effect is the same.

export interface MailSettings {
  from: string;
  /** Signs every message. */
  shopName: string;
  /** EMAIL_VERIFICATION=required (only meaningful while mail is on: nobody could open a link otherwise). */
  verificationRequired: boolean;
  /** SUPPORT_EMAIL: where a buyer reaches the shop (every email's footer), or null. */
  supportEmail: string | null;
  /** LOW_STOCK_THRESHOLD: a purchase taking a product's stock to this or below alerts the operators. */
  lowStockThreshold: number;
}

export function readMailSettings(env: Bindings): MailSettings | null {
  const from = env.EMAIL_FROM?.trim();
  if (!env.EMAIL || !from) return null;
  return {
    from,
    shopName: env.SHOP_NAME?.trim() || 'Stock Wallet',
    verificationRequired: env.EMAIL_VERIFICATION === 'required',
    lowStockThreshold: readConfig(env).lowStockThreshold,
    supportEmail: readConfig(env).supportEmail,
  };
}

/** Handed by a route to a service whose effect sends email: the settings, and where committed emails go. */
export interface Mail {
  settings: MailSettings;
  /** PUBLIC_BASE_URL, where links in messages point; null while it is unset (an email needing a link is then recorded failed). */
  origin: string | null;
  /** Enqueues the committed emails after the response (a lost enqueue is the scheduled sweep's to redo). */
  send: (jobs: EmailJob[]) => void;
}

/**
 * The scheduled run's: its emails stay in the outbox for the next run's sweep (enqueueing now would spend statements
 * the run's budget does not have). Links point at PUBLIC_BASE_URL, as a request's do.
 */
export function scheduledMail(env: Bindings): Mail | undefined {
  const settings = readMailSettings(env);
  return settings ? { settings, origin: publicBaseUrl(env), send: () => {} } : undefined;
}
