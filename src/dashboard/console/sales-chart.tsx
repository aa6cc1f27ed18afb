import { formatUsd } from '../../lib/money';
import type { SalesDay } from '../../services/operator/overview';
import { Money } from '../components';
import { DataTable } from '../tables';

interface SalesFigures {
  label: string;
  orders: number;
  revenueCents: number;
  refundsCents: number;
  depositsCents: number;
}

function totalOf(label: string, days: SalesDay[]): SalesFigures {
  const sum = (pick: (d: SalesDay) => number) => days.reduce((total, d) => total + pick(d), 0);
  return { label, orders: sum((d) => d.orders), revenueCents: sum((d) => d.revenueCents), refundsCents: sum((d) => d.refundsCents), depositsCents: sum((d) => d.depositsCents) };
}

// The overview's sales chart: an SVG drawn on the server (no script), one bar pair per day (revenue, refunds), and
// the same numbers in a table (SalesTable) for screen readers and for reading exact values.

const WIDTH = 720;
const HEIGHT = 220;
// Room for the value axis' labels at the phone's larger text (app.css: .chart text under 40rem).
const PLOT = { left: 84, right: 8, top: 12, bottom: 34 };

/** An axis value, short: `$0.50`, `$25`, `$2,500`, `$10k` (exact: integer cents throughout). */
function axisLabel(cents: number): string {
  if (cents % 100_000 === 0 && cents > 0) return `$${cents / 100_000}k`;
  return cents % 100 === 0 ? formatUsd(cents).slice(0, -3) : formatUsd(cents);
}

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
              {axisLabel(Math.round(top * share))}
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

const FIGURES = (label: string) => [
  { label, cell: (d: SalesFigures) => d.label },
  { label: 'Orders', class: 'num' as const, cell: (d: SalesFigures) => d.orders },
  { label: 'Revenue', class: 'num' as const, cell: (d: SalesFigures) => <Money cents={d.revenueCents} /> },
  { label: 'Refunds', class: 'num' as const, cell: (d: SalesFigures) => <Money cents={d.refundsCents} /> },
  { label: 'Deposits credited', class: 'num' as const, cell: (d: SalesFigures) => <Money cents={d.depositsCents} /> },
];

/** Totals of the last day, 7 days and 30 days (today included): what the overview leads with. */
export function SalesTotals({ days }: { days: SalesDay[] }) {
  const rows = [
    ['Today', 1],
    ['Last 7 days', 7],
    [`Last ${days.length} days`, days.length],
  ].map(([label, count]) => totalOf(label as string, days.slice(-count)));
  return <DataTable caption="Sales totals (UTC days)" rows={rows} columns={FIGURES('Period')} empty="" />;
}

/** The chart's numbers, for the days with any activity (a fresh shop's table is not thirty rows of zeros). */
export function SalesTable({ days }: { days: SalesDay[] }) {
  const active = days.filter((d) => d.orders > 0 || d.refundsCents > 0 || d.depositsCents > 0).reverse();
  return (
    <DataTable
      caption="Sales per day (UTC)"
      rows={active.map((d) => ({ ...d, label: d.date }))}
      columns={FIGURES('Day')}
      empty={`No orders, refunds or deposits in the last ${days.length} days.`}
    />
  );
}
