import { formatUsd } from '../../lib/money';
import type { SalesDay } from '../../services/operator-overview';
import { Money } from '../components';

// The overview's sales chart: an SVG drawn on the server (no script), one bar pair per day (revenue, refunds), and
// the same numbers in a table (SalesTable) for screen readers and for reading exact values.

const WIDTH = 720;
const HEIGHT = 220;
const PLOT = { left: 56, right: 8, top: 12, bottom: 28 };

/** A round top for the value axis: 1, 2 or 5 times a power of ten, at least $1. */
function axisTop(maxCents: number): number {
  const target = Math.max(maxCents, 100);
  const power = 10 ** Math.floor(Math.log10(target));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= target)!;
}

export function SalesChart({ days }: { days: SalesDay[] }) {
  const top = axisTop(Math.max(...days.map((d) => Math.max(d.revenueCents, d.refundsCents))));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / days.length;
  const bar = Math.max(1, slot * 0.38);
  const y = (cents: number) => PLOT.top + plotHeight - (cents / top) * plotHeight;
  const totalRevenue = days.reduce((sum, d) => sum + d.revenueCents, 0);
  const totalOrders = days.reduce((sum, d) => sum + d.orders, 0);
  const busiest = days.reduce((best, d) => (d.revenueCents > best.revenueCents ? d : best), days[0]);
  const summary =
    `${totalOrders} orders and ${formatUsd(totalRevenue)} revenue from ${days[0].date} to ${days.at(-1)!.date}` +
    (busiest.revenueCents > 0 ? `; the busiest day was ${busiest.date} with ${formatUsd(busiest.revenueCents)}.` : '; no sales yet.');
  return (
    <figure class="card">
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby="sales-chart-title sales-chart-desc">
        <title id="sales-chart-title">{`Revenue and refunds per day, last ${days.length} days`}</title>
        <desc id="sales-chart-desc">{summary}</desc>
        {[0, 0.5, 1].map((share) => (
          <>
            <line class="axis" x1={PLOT.left} x2={WIDTH - PLOT.right} y1={y(top * share)} y2={y(top * share)} />
            <text x={PLOT.left - 6} y={y(top * share) + 4} text-anchor="end">
              {formatUsd(Math.round(top * share))}
            </text>
          </>
        ))}
        {days.map((d, i) => {
          const x = PLOT.left + i * slot + slot * 0.1;
          return (
            <>
              <rect class="bar" x={x} y={y(d.revenueCents)} width={bar} height={PLOT.top + plotHeight - y(d.revenueCents)} />
              <rect class="refund" x={x + bar} y={y(d.refundsCents)} width={bar} height={PLOT.top + plotHeight - y(d.refundsCents)} />
              {i % 5 === 0 && (
                <text x={x + bar} y={HEIGHT - 8} text-anchor="middle">
                  {d.date.slice(5)}
                </text>
              )}
            </>
          );
        })}
      </svg>
      <figcaption class="chart-legend">
        <span>
          <span class="swatch" />
          Revenue
        </span>
        <span>
          <span class="swatch refund" />
          Refunds
        </span>
      </figcaption>
    </figure>
  );
}

/** The chart's numbers, day by day (the overview shows it below the lists that need attention). */
export function SalesTable({ days }: { days: SalesDay[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>Sales per day (UTC)</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col" class="num">Orders</th>
            <th scope="col" class="num">Revenue</th>
            <th scope="col" class="num">Refunds</th>
            <th scope="col" class="num">Deposits credited</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr>
              <th scope="row">{d.date}</th>
              <td class="num">{d.orders}</td>
              <td class="num">
                <Money cents={d.revenueCents} />
              </td>
              <td class="num">
                <Money cents={d.refundsCents} />
              </td>
              <td class="num">
                <Money cents={d.depositsCents} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
  );
}
