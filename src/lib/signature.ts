import { hmacSha256Hex, verifyHmacHex } from './crypto';

// The signature scheme of every webhook, inbound (payment gateways) and outgoing (events to users' endpoints):
// `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. Portable (Workers, Node 20+,
// browsers): the typed client's receiver helper uses it too.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface ParsedSignature {
  t: number;
  v1: string;
}

export function parseSignatureHeader(header: string | null | undefined): ParsedSignature | null {
  if (!header) return null;
  const parts = Object.fromEntries(
    header.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    }),
  );
  if (!/^\d{1,12}$/.test(parts.t ?? '') || !/^[0-9a-f]{64}$/i.test(parts.v1 ?? '')) return null;
  return { t: Number(parts.t), v1: parts.v1.toLowerCase() };
}

/** The `X-Signature` value for `body`, signed at `nowMs`. */
export async function signatureHeader(secret: string, body: string, nowMs: number): Promise<string> {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${await hmacSha256Hex(secret, `${t}.${body}`)}`;
}

/**
 * Whether `header` signs `body` with `secret` within `toleranceSeconds` of `nowMs`. The MAC is checked by
 * WebCrypto's HMAC verify (constant time), before and regardless of the timestamp.
 */
export async function isValidSignature(
  secret: string,
  body: string,
  header: string | null | undefined,
  nowMs: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): Promise<boolean> {
  const signature = parseSignatureHeader(header);
  if (!signature) return false;
  const authentic = await verifyHmacHex('SHA-256', secret, `${signature.t}.${body}`, signature.v1);
  return authentic && Math.abs(nowMs / 1000 - signature.t) <= toleranceSeconds;
}
