import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { STATIC_ASSETS } from '../generated/static-assets';
import { DoneNotice } from './done-notices';

// Static files (assets/dashboard/, served from public/dashboard/assets/ under content-hashed URLs with a one-year
// immutable cache, headers in public/_headers): no inline styles anywhere, the CSP allows only these.
const STYLESHEET_PATH = STATIC_ASSETS['app.css'];
const ICON_PATH = STATIC_ASSETS['icon.svg'];

const SECTIONS = [
  ['/dashboard', 'Overview'],
  ['/dashboard/shop', 'Shop'],
  ['/dashboard/orders', 'Orders'],
  ['/dashboard/wallet', 'Wallet'],
  ['/dashboard/documents', 'Documents'],
  ['/dashboard/referrals', 'Referrals'],
  ['/dashboard/keys', 'API keys'],
  ['/dashboard/profile', 'Profile'],
] as const;

/** The operator console's sections (src/dashboard/console/), a second navigation under the same layout. */
const CONSOLE_SECTIONS = [
  ['/dashboard/console', 'Console'],
  ['/dashboard/console/products', 'Products'],
  ['/dashboard/console/coupons', 'Coupons'],
  ['/dashboard/console/orders', 'Orders'],
  ['/dashboard/console/claims', 'Claims'],
  ['/dashboard/console/users', 'Users'],
  ['/dashboard/console/deposits', 'Deposits'],
  ['/dashboard/console/documents', 'Documents'],
  ['/dashboard/console/invoicing', 'Invoicing'],
  ['/dashboard/console/payments', 'Payments'],
  ['/dashboard/console/revoked-items', 'Revoked items'],
  ['/dashboard/console/blocklist', 'Blocklist'],
  ['/dashboard/console/referrals', 'Referrals'],
  ['/dashboard/console/audit', 'Audit log'],
  ['/dashboard/console/emails', 'Emails'],
] as const;

export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number][0];

export interface LayoutProps {
  title: string;
  /** The section to mark as current in the navigation. */
  section?: (typeof SECTIONS)[number][0] | ConsoleSection;
  /** An operator's pages also link to the console; console pages show its navigation. */
  operator?: boolean;
  /** Navigation and sign-out are shown to a signed-in user (any page with a section is signed in). */
  signedIn?: boolean;
  children?: Child;
  /** `?done=` of the URL: the notice after a form (src/dashboard/done-notices.tsx). */
  done?: string;
  /** Warranty claims waiting for the operator, from the session's proof: shown by "Claims" in the console's nav. */
  openClaims?: number;
}

function Layout({ title, section, operator = false, signedIn = section !== undefined, children, done, openClaims }: LayoutProps) {
  const inConsole = CONSOLE_SECTIONS.some(([href]) => href === section);
  const sections = inConsole ? CONSOLE_SECTIONS : operator ? [...SECTIONS, CONSOLE_SECTIONS[0]] : SECTIONS;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Stock Wallet`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        <link rel="icon" href={ICON_PATH} type="image/svg+xml" />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/dashboard">
            Stock Wallet
          </a>
          {signedIn && (
            <nav aria-label={inConsole ? 'Console' : 'Dashboard'}>
              <ul>
                {inConsole && (
                  <li>
                    <a href="/dashboard">Dashboard</a>
                  </li>
                )}
                {sections.map(([href, label]) => (
                  <li>
                    <a href={href} aria-current={href === section ? 'page' : undefined}>
                      {label}
                      {href === '/dashboard/console/claims' && openClaims ? <span class="count" aria-label={`${openClaims} open`}>{` ${openClaims}`}</span> : null}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {signedIn && (
            <form method="post" action="/dashboard/sign-out" class="sign-out">
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main id="main">
          <h1>{title}</h1>
          <DoneNotice name={done} />
          {children}
        </main>
      </body>
    </html>
  );
}

/** A whole page: doctype, layout, status. Its batch proved the session, and said whether its user is an operator. */
export async function page(c: Context, props: LayoutProps, status: ContentfulStatusCode = 200) {
  const operator = c.get('caller')?.proved?.role === 'operator';
  const done = status === 200 ? c.req.query('done') : undefined;
  const openClaims = c.get('caller')?.proved?.openClaims ?? undefined;
  return c.html(`<!doctype html>${await (<Layout operator={operator} done={done} openClaims={openClaims} {...props} />).toString()}`, status);
}
