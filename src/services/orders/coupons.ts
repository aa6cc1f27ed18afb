import { and, eq, sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import { getDb, type Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { coupons, type CouponRow } from '../../db/schema';
import { fieldError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { auditEntry, jsonDetails, writeAsActor, type Actor } from '../accounts/audit-log';
import type { Query } from '../caller';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';

// Coupons, as the operator runs them (admin API and console). Redemptions are counted from coupon_redemptions,
// which only a purchase's batch writes (src/services/catalogue/pricing.ts).

export interface Coupon extends CouponRow {
  redemptions: number;
}

/** A coupon's fields as the service takes them (cents; camelCase); `code` only on creation. */
export interface CouponInput {
  code?: string;
  percentOff?: number;
  amountOffCents?: number;
  minTotalCents?: number | null;
  startsAt?: string | null;
  expiresAt?: string | null;
  maxRedemptions?: number | null;
  maxPerUser?: number | null;
  productIds?: number[] | null;
  variantIds?: number[] | null;
  active?: boolean;
}

const idsText = (ids: number[] | null | undefined) => (ids === undefined ? undefined : ids === null ? null : JSON.stringify([...new Set(ids)].sort((a, b) => a - b)));

const couponColumns = sql`${columnsOf(coupons)}, (SELECT count(*) FROM coupon_redemptions r WHERE r.coupon_id = coupons.id) AS redemptions`;
const couponWhere = (condition: SQL) => sql`SELECT ${couponColumns} FROM coupons WHERE ${condition}`;
/** The coupon as written, for an Idempotency-Key record: a replay answers it as it was. */
const snapshotWhere = (condition: SQL) => sql`SELECT id, json_insert(${rowJson(coupons)}, '$.redemptions',
  (SELECT count(*) FROM coupon_redemptions r WHERE r.coupon_id = coupons.id)) AS snapshot FROM coupons WHERE ${condition}`;

const codeTaken = () => fieldError('code', 'The code has already been taken.');

/** The columns a coupon write sets; a percent coupon has no amount and the other way round. */
function couponValues(input: CouponInput, now: string) {
  return {
    percentOff: input.percentOff ?? (input.amountOffCents !== undefined ? null : undefined),
    amountOffCents: input.amountOffCents ?? (input.percentOff !== undefined ? null : undefined),
    minTotalCents: input.minTotalCents,
    startsAt: input.startsAt,
    expiresAt: input.expiresAt,
    maxRedemptions: input.maxRedemptions,
    maxPerUser: input.maxPerUser,
    productIds: idsText(input.productIds),
    variantIds: idsText(input.variantIds),
    active: input.active === undefined ? undefined : input.active ? 1 : 0,
    updatedAt: now,
  };
}

/** The audit entry of a coupon write: the fields the operator sent (amounts in USD). */
function couponAudit(actor: Actor, action: 'coupon.created' | 'coupon.updated', input: CouponInput, written: SQL, now: string): SQL {
  const { amountOffCents, minTotalCents, percentOff, startsAt, expiresAt, maxRedemptions, maxPerUser, productIds, variantIds, ...rest } = input;
  const details = {
    ...rest,
    percent_off: percentOff,
    amount_off: amountOffCents === undefined ? undefined : centsToAmount(amountOffCents),
    min_total: minTotalCents === undefined || minTotalCents === null ? minTotalCents : centsToAmount(minTotalCents),
    starts_at: startsAt,
    expires_at: expiresAt,
    max_redemptions: maxRedemptions,
    max_per_user: maxPerUser,
    product_ids: productIds,
    variant_ids: variantIds,
  };
  return auditEntry(actor, { action, target: sql`'coupon:' || id`, details: jsonDetails(details), from: sql`FROM coupons WHERE ${written}` }, now);
}

/** The write's batch; `also` are reads after it (in the same transaction), answered beside the coupon. */
async function writeCoupon(d1: Db, actor: Actor, write: SQL, written: SQL, audit: SQL, claim?: IdempotencyClaim, also: SQL[] = []) {
  try {
    const { reads } = await writeAsActor(d1, actor, {
      writes: [write, ...(claim ? recordClaim(OPERATOR, claim, snapshotWhere(written)) : []), audit],
      reads: [couponWhere(written), ...also],
      committed: ([coupon]) => rowsOf(coupon).length > 0,
    });
    return { coupon: rowsOf<Coupon>(reads[0])[0] as Coupon | undefined, also: reads.slice(1) };
  } catch (err) {
    if (isUniqueViolation(err, 'coupons.code')) throw codeTaken();
    throw err;
  }
}

/** One batch: the insert, its Idempotency-Key record, its audit entry; found again by code (unique, known before). */
export async function createCoupon(d1: Db, actor: Actor, input: CouponInput & { code: string }, claim?: IdempotencyClaim): Promise<Coupon> {
  const now = isoNow();
  const written = sql`code = ${input.code} AND created_at = ${now}`;
  const insert = getDb(d1)
    .insert(coupons)
    .values({ ...couponValues(input, now), code: input.code, maxPerUser: input.maxPerUser === undefined ? 1 : input.maxPerUser, createdAt: now })
    .getSQL();
  return (await writeCoupon(d1, actor, insert, written, couponAudit(actor, 'coupon.created', input, written, now), claim)).coupon!;
}

/**
 * After the update, `starts_at` is still before `expires_at`. A body with both is checked on arrival
 * (src/schemas/coupons.ts); one with either alone is checked against the stored other here, in the update's batch.
 */
function windowInOrder({ startsAt, expiresAt }: CouponInput): SQL {
  const starts = startsAt === undefined ? sql`starts_at` : sql`${startsAt}`;
  const expires = expiresAt === undefined ? sql`expires_at` : sql`${expiresAt}`;
  return sql`(${starts} IS NULL OR ${expires} IS NULL OR ${starts} < ${expires})`;
}

const windowOutOfOrder = (input: CouponInput) =>
  input.startsAt === undefined ? fieldError('expires_at', 'expires_at must be after starts_at') : fieldError('starts_at', 'starts_at must be before expires_at');

/** One batch: the update (any field but the code), its record and audit entry; its `updated_at` says it applied. */
export async function updateCoupon(d1: Db, actor: Actor, couponId: number, input: CouponInput, claim?: IdempotencyClaim): Promise<Coupon> {
  const now = isoNow();
  const written = sql`id = ${couponId} AND updated_at = ${now}`;
  const update = getDb(d1).update(coupons).set(couponValues(input, now)).where(and(eq(coupons.id, couponId), windowInOrder(input))).getSQL();
  const audit = couponAudit(actor, 'coupon.updated', input, written, now);
  const { coupon, also } = await writeCoupon(d1, actor, update, written, audit, claim, [sql`SELECT 1 FROM coupons WHERE id = ${couponId}`]);
  if (!coupon) throw rowsOf(also[0]).length > 0 ? windowOutOfOrder(input) : notFound('Coupon');
  return coupon;
}

/** Every coupon, newest first. */
export const couponsQuery = (page: Page): Query<{ rows: Coupon[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  return {
    reads: [
      sql`SELECT ${couponColumns} FROM coupons ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM coupons`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<Coupon>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

export const couponQuery = (couponId: number): Query<Coupon> => ({
  reads: [couponWhere(sql`id = ${couponId}`)],
  parse: ([rows]) => {
    const [coupon] = rowsOf<Coupon>(rows);
    if (!coupon) throw notFound('Coupon');
    return coupon;
  },
});
