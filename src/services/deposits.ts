import { and, count, desc, eq, sql } from 'drizzle-orm';
import { getDb } from '../db/client';
import { deposits, type DepositRow } from '../db/schema';
import type { Config } from '../env';
import { notFound } from '../lib/errors';
import { pageWindow, type Page } from '../lib/pagination';
import { addMinutes, isoNow } from '../lib/time';
import { DEFAULT_CRYPTO_CURRENCY, getGateway, normaliseGateway, type CryptoCurrency, type GatewayInput } from './gateways';

export interface DepositRequest {
  amountCents: number;
  gateway: GatewayInput;
  cryptoCurrency?: CryptoCurrency;
}

export async function createDeposit(d1: D1Database, config: Config, userId: number, request: DepositRequest): Promise<DepositRow> {
  const db = getDb(d1);
  const gateway = getGateway(normaliseGateway(request.gateway), config);
  const now = isoNow();
  const cryptoCurrency = gateway.isCrypto ? (request.cryptoCurrency ?? DEFAULT_CRYPTO_CURRENCY) : null;
  const [pending] = await db
    .insert(deposits)
    .values({
      userId,
      amountCents: request.amountCents,
      gateway: gateway.name,
      cryptoCurrency,
      status: 'pending',
      expiresAt: addMinutes(now, config.depositTtlMinutes),
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const invoice = await gateway.createInvoice({
    depositId: pending.id,
    amountCents: pending.amountCents,
    cryptoCurrency,
    expiresAt: pending.expiresAt,
  });
  const [deposit] = await db
    .update(deposits)
    .set({ paymentUrl: invoice.paymentUrl, externalId: invoice.externalId })
    .where(eq(deposits.id, pending.id))
    .returning();
  return deposit;
}

/** Pending deposits past their expiry read as expired: the scheduled job also does this, reads don't wait for it. */
const expireOverdue = (d1: D1Database, userId: number) => {
  const now = isoNow();
  return getDb(d1).run(sql`UPDATE deposits SET status = 'expired', updated_at = ${now}
                           WHERE user_id = ${userId} AND status = 'pending' AND expires_at <= ${now}`);
};

export async function listDeposits(d1: D1Database, userId: number, page: Page) {
  const db = getDb(d1);
  const { limit, offset } = pageWindow(page);
  await expireOverdue(d1, userId);
  const [rows, [{ total }]] = await db.batch([
    db.select().from(deposits).where(eq(deposits.userId, userId)).orderBy(desc(deposits.createdAt), desc(deposits.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(deposits).where(eq(deposits.userId, userId)),
  ]);
  return { rows, total };
}

export async function getDeposit(d1: D1Database, userId: number, depositId: number): Promise<DepositRow> {
  await expireOverdue(d1, userId);
  const [deposit] = await getDb(d1)
    .select()
    .from(deposits)
    .where(and(eq(deposits.id, depositId), eq(deposits.userId, userId)));
  if (!deposit) throw notFound('Deposit');
  return deposit;
}
