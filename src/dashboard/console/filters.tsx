import type { Child } from 'hono/jsx';
import type { DateRange } from '../../lib/date-range';
import type { ExportName } from '../../services/operator/exports';

// The console lists' day range (from / to, UTC, inclusive) and their "Export CSV" links, which carry the same range.

const EXPORTS_PATH = '/dashboard/console/exports';

const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')).toString();

/** A GET form "From" / "To" (date inputs) keeping the list's other filters (`keep`) as hidden fields; `children` follow its button (the list's Export CSV link). */
export function DateFilter({ action, range, keep = {}, children }: { action: string; range: DateRange; keep?: Record<string, string | undefined>; children?: Child }) {
  return (
    <form method="get" action={action} class="search dates" aria-label="Date range (UTC)">
      {Object.entries(keep).map(([name, value]) => (value === undefined || value === '' ? null : <input type="hidden" name={name} value={value} />))}
      <div class="field">
        <label for="filter-from">From</label>
        <input id="filter-from" name="from" type="date" value={range.from} />
      </div>
      <div class="field">
        <label for="filter-to">To</label>
        <input id="filter-to" name="to" type="date" value={range.to} />
      </div>
      <button type="submit" class="secondary">
        Filter
      </button>
      {children}
    </form>
  );
}

interface ListFilterProps {
  action: string;
  range: DateRange;
  /** Filters the form does not show, kept as hidden fields (a user's orders). */
  keep?: Record<string, string | undefined>;
  /** Fields before From / To (the search) and after them (a status). */
  before?: Child;
  after?: Child;
  /** A line under the form (its `id` is `filter-hint`, for a field's aria-describedby). */
  hint?: string;
  /** After the button: the list's Export CSV link. */
  children?: Child;
}

/**
 * A list's one filter form: every field (search, From / To, a status) is applied together by "Apply", so nothing typed
 * in one part is dropped by submitting another. The page then shows the filtered count (and totals where they mean
 * something).
 */
export function ListFilter({ action, range, keep = {}, before, after, hint, children }: ListFilterProps) {
  return (
    <form method="get" action={action} class="search filter" role="search" aria-label="Filter">
      {Object.entries(keep).map(([name, value]) => (value === undefined || value === '' ? null : <input type="hidden" name={name} value={value} />))}
      {before}
      <div class="field">
        <label for="filter-from">From</label>
        <input id="filter-from" name="from" type="date" value={range.from} />
      </div>
      <div class="field">
        <label for="filter-to">To</label>
        <input id="filter-to" name="to" type="date" value={range.to} />
      </div>
      {after}
      <button type="submit">Apply</button>
      {children}
      {hint !== undefined && (
        <p class="muted" id="filter-hint">
          {hint}
        </p>
      )}
    </form>
  );
}

/** The list's range as a CSV file (src/dashboard/console/exports.ts). */
export const exportHref = (name: ExportName, range: DateRange) => {
  const params = query({ from: range.from, to: range.to });
  return `${EXPORTS_PATH}/${name}.csv${params ? `?${params}` : ''}`;
};

export const ExportLink = ({ name, range, label = 'Export CSV' }: { name: ExportName; range: DateRange; label?: string }) => (
  <a href={exportHref(name, range)} download>
    {label}
  </a>
);
