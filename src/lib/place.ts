/**
 * Where a request comes from, as the blocklist sees it: the client address (`CF-Connecting-IP`) and Cloudflare's
 * country and network (`request.cf`). `blockedBy` is filled by a refused change with the ids of the rules it matched,
 * so their hits are counted after the response (src/middleware/request-place.ts).
 */
export interface RequestPlace {
  ip: string | null;
  country: string | null;
  asn: number | null;
  blockedBy?: number[];
}

interface CfProperties {
  country?: unknown;
  asn?: unknown;
}

export function placeOf(request: Request, clientIp: string | undefined): RequestPlace {
  const cf = (request as Request & { cf?: CfProperties }).cf;
  const country = typeof cf?.country === 'string' && /^([A-Za-z]{2}|T1)$/i.test(cf.country) ? cf.country.toUpperCase() : null;
  const asn = typeof cf?.asn === 'number' && Number.isSafeInteger(cf.asn) ? cf.asn : null;
  return { ip: clientIp ?? null, country, asn };
}
