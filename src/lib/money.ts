// Money is integer cents in storage and arithmetic; JSON numbers only at the edges of the API.

const TWO_DECIMALS = /^(\d+)(?:\.(\d{1,2}))?$/;

/** A JSON number with at most two decimals as exact cents, or null when it has more precision or is out of range. */
export function amountToCents(amount: number): number | null {
  if (!Number.isFinite(amount)) return null;
  const match = TWO_DECIMALS.exec(String(Math.abs(amount)));
  if (!match) return null;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) return null;
  return amount < 0 ? -cents : cents;
}

/** Cents rendered as a JSON number with at most two decimals (1250 -> 12.5, 7 -> 0.07). */
export function centsToAmount(cents: number): number {
  return cents / 100;
}

/** Cents for people to read: `$1,234.56`, `-$0.07`. */
export function formatUsd(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const dollars = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+$)/g, ',');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

const DECIMAL = /^(\d{1,15})(?:\.(\d+))?$/;

/**
 * A non-negative USD amount as a vendor writes it (a JSON number or a decimal string, any number of decimals) in
 * cents, rounded half up on its digits, never through floating point; null when it is not such an amount.
 */
export function decimalToCents(value: unknown): number | null {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value.trim() : '';
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const decimals = (match[2] ?? '').padEnd(3, '0');
  const cents = Number(match[1]) * 100 + Number(decimals.slice(0, 2)) + (Number(decimals[2]) >= 5 ? 1 : 0);
  return Number.isSafeInteger(cents) ? cents : null;
}

/** Cents as a decimal string with exactly two decimals (`1050` → `"10.50"`), as vendors take amounts. */
export const centsToDecimal = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/**
 * The least a vendor's "paid" may report for a deposit of `cents`: the amount less 1 %, rounded down to the cent
 * (exchange rates and fees move a crypto payment's USD value a little). Integer arithmetic only.
 */
export const leastPaidCents = (cents: number) => (cents * 99 - ((cents * 99) % 100)) / 100;
