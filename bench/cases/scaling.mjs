// Latency by stock size: GET /stock (miss) and POST /orders qty 1 at each level, the best p50 of a few rounds.
import { items } from '../report.mjs';
import { measure } from '../measure.mjs';
import { SCALING_ROUNDS } from '../options.mjs';

/** A smaller level's point: its rounds of both cases. */
export async function scalingPoint(b, level) {
  const stock = [];
  const purchase = [];
  for (let round = 1; round <= SCALING_ROUNDS; round++) {
    stock.push(await measure(`GET /stock (miss) @${items(level)} #${round}`, b.noCacheBase, b.requests.stockMiss));
    purchase.push(await measure(`POST /orders qty 1 @${items(level)} #${round}`, b.apiBase, await b.requests.purchaseRequests(1), { consume: true }));
  }
  return { stock_items: level, stock, purchase };
}

/** The final level's point: its first round is the cases themselves (`stockMiss`, `q1`), then the other rounds. */
export async function finalScalingPoint(b, level, stockMiss, q1) {
  const stock = [stockMiss];
  const purchase = [q1];
  for (let round = 2; round <= SCALING_ROUNDS; round++) {
    stock.push(await measure(`GET /stock (miss) @${items(level)} #${round}`, b.noCacheBase, b.requests.stockMiss));
    purchase.push(await measure(`POST /orders qty 1 @${items(level)} #${round}`, b.apiBase, await b.requests.purchaseRequests(1), { consume: true }));
  }
  return { stock_items: level, stock, purchase };
}
