// The one rule for webhook endpoint URLs: the OpenAPI document's `pattern` is WEBHOOK_URL's source, and the code
// checks the very same regular expression (src/routes/events/webhook-endpoints.ts, and again before every delivery).
//
// Deliveries carry money events and the service makes the request, so a URL may only name a public DNS host over
// TLS: no IP address in any form (a cloud metadata address such as 169.254.169.254, a private or loopback range,
// IPv6 in brackets), no `localhost`, no user info (`user:pass@` would be stored and shown in plain text). The rule
// holds wherever the worker runs, whether or not that place can reach private networks.
//
// Written without lookaheads so that generators can produce matching strings from the pattern (fast-check, Schemathesis).

/** A DNS label: letters (either case: a URL parser lowercases the host), digits and inner hyphens, at most 63 characters. */
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * Any word of 2..63 letters except `word` (a lowercase word, matched in either case), without a lookahead: a
 * different length, or the same length and a different letter somewhere.
 */
function lettersOtherThan(word: string): string {
  const n = word.length;
  const anyCase = (letter: string) => `[${letter}${letter.toUpperCase()}]`;
  const otherLetter = (letter: string) => {
    const others = LETTERS.replace(letter, '');
    return `[${others}${others.toUpperCase()}]`;
  };
  const sameLength = [...word].map((letter, i) => {
    const rest = n - 1 - i;
    return `${[...word.slice(0, i)].map(anyCase).join('')}${otherLetter(letter)}${rest > 0 ? `[a-zA-Z]{${rest}}` : ''}`;
  });
  return [`[a-zA-Z]{2,${n - 1}}`, `[a-zA-Z]{${n + 1},63}`, ...sameLength].join('|');
}

/**
 * The last label names a top-level domain: letters (or an internationalised one, `xn--...`), so the host never ends
 * in a number, which a URL parser would read as an IPv4 address (`1.2.3.4`, `0x7f.1`, `2130706433`). `localhost`,
 * which resolves to this machine, is no top-level domain here (`localhost` and `*.localhost` are both refused).
 */
const TOP_LEVEL = `(?:${lettersOtherThan('localhost')}|[xX][nN]--[a-zA-Z0-9-]{1,59})`;

/** 1..65535. */
const PORT = '(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/**
 * What may follow the host: path segments, a query and a fragment made of the characters RFC 3986 allows there (or
 * percent-escapes), as the document's `format: uri` says: no spaces, and none of `"<>\\^\`{|}`, which no URI contains.
 */
const SEGMENT_CHAR = "(?:[a-zA-Z0-9._~!$&'()*+,;=:@-]|%[0-9a-fA-F]{2})";
const QUERY_CHAR = "(?:[a-zA-Z0-9._~!$&'()*+,;=:@/?-]|%[0-9a-fA-F]{2})";
const REST = `(?:/${SEGMENT_CHAR}*)*(?:\\?${QUERY_CHAR}*)?(?:#${QUERY_CHAR}*)?`;

/** The two local receivers accepted over plain HTTP when ALLOW_LOCAL_WEBHOOK_URLS=true. */
const LOCAL = 'http://(?:localhost|127\\.0\\.0\\.1)';

/** https:// to a host name with at least two labels, or http:// to this machine; an optional port; then the rest. */
export const WEBHOOK_URL = new RegExp(`^(?:https://(?:${LABEL}\\.)+(?:${TOP_LEVEL})|${LOCAL})(?::${PORT})?${REST}$`);

const LOCAL_URL = new RegExp(`^${LOCAL}(?:[:/?#]|$)`);

/** Why `raw` is refused (WEBHOOK_URL says whether), in words a developer can act on. */
export function webhookUrlRefusal(raw: unknown): string {
  if (typeof raw !== 'string') return 'url must be a string';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute https:// URL';
  }
  if (url.username || url.password) return 'url may not contain user info (user:password@)';
  if (url.protocol !== 'https:') return 'url must use https://';
  if (/^[\d.]+$|^\[|^0x/i.test(url.hostname) || /\.\d+$/.test(url.hostname)) return 'url must name a DNS host, not an IP address';
  if (url.hostname === 'localhost' || url.hostname.endsWith('.localhost')) return 'url may not point at localhost';
  return 'url must be https:// with a DNS host name of at least two labels, an optional port, and only characters a URI may contain (no spaces, quotes or braces)';
}

/**
 * A URL that passed WEBHOOK_URL: null when the service may deliver to it, else why not. Local http:// receivers
 * are for development only (ALLOW_LOCAL_WEBHOOK_URLS=true).
 */
export function webhookUrlProblem(raw: string, allowLocal: boolean): string | null {
  if (!WEBHOOK_URL.test(raw)) return webhookUrlRefusal(raw);
  return !allowLocal && LOCAL_URL.test(raw) ? 'url must use https://' : null;
}
