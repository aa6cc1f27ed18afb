// PUBLIC_BASE_URL: the shop's public origin, the one start of every link in an email (and of any page that names the
// shop's own address to someone else), never the request's Host header, which a client chooses.

/** Why an email that needs a link is recorded failed rather than sent with a guessed host. */
export const PUBLIC_BASE_URL_UNSET = 'PUBLIC_BASE_URL is not set';

/** PUBLIC_BASE_URL without its trailing slashes, or null while it is unset or not an http(s) URL. */
export function publicBaseUrl(env: { PUBLIC_BASE_URL?: string }): string | null {
  const raw = env.PUBLIC_BASE_URL?.trim().replace(/\/+$/, '');
  if (!raw) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? raw : null;
  } catch {
    return null;
  }
}
