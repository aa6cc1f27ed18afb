import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { STATIC_ASSETS } from '../generated/static-assets';

// Static files (assets/dashboard/, served from public/dashboard/assets/ under content-hashed URLs with a one-year
// immutable cache, headers in public/_headers): no inline styles anywhere, the CSP allows only these.
const STYLESHEET_PATH = STATIC_ASSETS['app.css'];
const ICON_PATH = STATIC_ASSETS['icon.svg'];

const SECTIONS = [
  ['/dashboard', 'Overview'],
  ['/dashboard/shop', 'Shop'],
  ['/dashboard/orders', 'Orders'],
  ['/dashboard/wallet', 'Wallet'],
  ['/dashboard/keys', 'API keys'],
  ['/dashboard/profile', 'Profile'],
] as const;

interface LayoutProps {
  title: string;
  /** The section to mark as current in the navigation. */
  section?: (typeof SECTIONS)[number][0];
  /** Navigation and sign-out are shown to a signed-in user (any page with a section is signed in). */
  signedIn?: boolean;
  children?: Child;
}

function Layout({ title, section, signedIn = section !== undefined, children }: LayoutProps) {
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
            <nav aria-label="Dashboard">
              <ul>
                {SECTIONS.map(([href, label]) => (
                  <li>
                    <a href={href} aria-current={href === section ? 'page' : undefined}>
                      {label}
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
          {children}
        </main>
      </body>
    </html>
  );
}

/** A whole page: doctype, layout, status. */
export async function page(c: Context, props: LayoutProps, status: ContentfulStatusCode = 200) {
  return c.html(`<!doctype html>${await (<Layout {...props} />).toString()}`, status);
}
