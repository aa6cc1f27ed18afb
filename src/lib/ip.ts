/**
 * IP addresses as 16 bytes written as 32 lowercase hex digits, IPv4 as IPv4-mapped IPv6 (`1.2.3.4` is
 * `::ffff:1.2.3.4`), so a fixed-width string comparison orders addresses and a range is a [start, end] pair of them.
 */

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const V4_TEXT = `${OCTET}(\\.${OCTET}){3}`;
const V4 = new RegExp(`^${V4_TEXT}$`);
const HEXTET = /^[0-9a-fA-F]{1,4}$/;

function v4Bytes(text: string): number[] | null {
  return V4.test(text) ? text.split('.').map(Number) : null;
}

function v6Bytes(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  // Only the address's very last part may be an embedded IPv4 address (`::ffff:1.2.3.4`, never `1.2.3.4::`).
  const groups = (half: string, last: boolean): number[] | null => {
    if (half === '') return [];
    const parts = half.split(':');
    const bytes: number[] = [];
    for (const [i, part] of parts.entries()) {
      const v4 = last && i === parts.length - 1 && part.includes('.') ? v4Bytes(part) : null;
      if (v4) bytes.push(...v4);
      else if (HEXTET.test(part)) bytes.push(parseInt(part, 16) >> 8, parseInt(part, 16) & 0xff);
      else return null;
    }
    return bytes;
  };
  const head = groups(halves[0], halves.length === 1);
  const tail = halves.length === 2 ? groups(halves[1], true) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 16 ? head : null;
  const gap = 16 - head.length - tail.length;
  return gap >= 2 ? [...head, ...new Array<number>(gap).fill(0), ...tail] : null;
}

// The same grammar as a regular expression (RFC 4291's text forms, RFC 3986's IPv6address), for the API's document:
// the schema validates with it, so what the document calls valid is exactly what parses below.
const H16 = '[0-9a-fA-F]{1,4}';
const LS32 = `(${H16}:${H16}|${V4_TEXT})`;
const upTo = (n: number) => (n < 0 ? '' : `((${H16}:){0,${n}}${H16})?`);
const V6_TEXT = [
  `(${H16}:){6}${LS32}`,
  `::(${H16}:){5}${LS32}`,
  `${upTo(0)}::(${H16}:){4}${LS32}`,
  `${upTo(1)}::(${H16}:){3}${LS32}`,
  `${upTo(2)}::(${H16}:){2}${LS32}`,
  `${upTo(3)}::${H16}:${LS32}`,
  `${upTo(4)}::${LS32}`,
  `${upTo(5)}::${H16}`,
  `${upTo(6)}::`,
].join('|');
/** An IPv4 or IPv6 address, or a CIDR range of either. */
export const IP_OR_CIDR_PATTERN = `^(${V4_TEXT}(/(3[0-2]|[12]?\\d))?|(${V6_TEXT})(/(12[0-8]|1[01]\\d|[1-9]?\\d))?)$`;

/** The 16 bytes of an IPv4 or IPv6 address (no zone, no brackets), or null. */
export function addressBytes(text: string): number[] | null {
  const v4 = v4Bytes(text);
  return v4 ? [...new Array<number>(10).fill(0), 0xff, 0xff, ...v4] : v6Bytes(text);
}

const hexOf = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

/** The address as 32 hex digits, or null when it is not an IP address. */
export function addressHex(text: string): string | null {
  const bytes = addressBytes(text);
  return bytes && hexOf(bytes);
}

/**
 * An address (`203.0.113.7`, `2001:db8::1`) or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`) as its first and
 * last address in hex, or null when it is neither. An IPv4 prefix counts within the mapped space (/24 is /120).
 */
export function ipRange(text: string): [string, string] | null {
  const [address, prefixText, ...rest] = text.split('/');
  const bytes = rest.length === 0 ? addressBytes(address) : null;
  if (!bytes) return null;
  const maxPrefix = v4Bytes(address) ? 32 : 128;
  if (prefixText !== undefined && !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
  if (prefix > maxPrefix) return null;
  const bits = prefix + (128 - maxPrefix);
  const start = bytes.map((b, i) => b & maskByte(bits, i));
  const end = bytes.map((b, i) => (b | ~maskByte(bits, i)) & 0xff);
  return [hexOf(start), hexOf(end)];
}

/** The bits of byte `i` that a prefix of `bits` keeps. */
const maskByte = (bits: number, i: number) => (0xff << (8 - Math.max(0, Math.min(8, bits - 8 * i)))) & 0xff;

/** Whether every range of `inner` lies within some range of `outer`. */
export const rangesWithin = (inner: [string, string][], outer: [string, string][]) =>
  inner.every(([start, end]) => outer.some(([from, to]) => start >= from && end <= to));

/** The IPv4-mapped space (`::ffff:0:0/96`) as the hex prefix of its addresses. */
const MAPPED_V4 = '00000000000000000000ffff';

/**
 * Whether a [start, end] range (from `ipRange`) is wider than a /8 of IPv4 or a /16 of IPv6: the widest a blocklist
 * rule may be. Counted in bits that start and end share, so an IPv4 range written as IPv6 (`::ffff:0.0.0.0/96`) is
 * held to the IPv4 limit.
 */
export function rangeTooWide([start, end]: [string, string]): boolean {
  let shared = 0;
  while (shared < 128 && bitAt(start, shared) === bitAt(end, shared)) shared++;
  const v4 = start.startsWith(MAPPED_V4) && end.startsWith(MAPPED_V4);
  return shared < (v4 ? 96 + 8 : 16);
}

const bitAt = (hex: string, bit: number) => (parseInt(hex[bit >> 2], 16) >> (3 - (bit & 3))) & 1;
