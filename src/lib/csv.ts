// CSV files for spreadsheets (RFC 4180): comma-separated, CRLF line ends, a field quoted when it holds a comma, a
// quote or a line break, quotes doubled. A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage
// return before one) as a formula, so such a cell is written with a leading ' (shown as text); a plain number such as
// -4.99 is data, not a formula, and stays a number.

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

export type CsvValue = string | number | boolean | null;

/** One cell as written in the file. */
export function csvCell(value: CsvValue): string {
  const text = value === null ? '' : String(value);
  const safe = FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A whole file: the header row, then one line per row, each ending in CRLF. */
export function csvFile(header: readonly string[], rows: readonly CsvValue[][]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

/** Cents as a signed decimal with two places (`-499` → `-4.99`): exact, never through floating point. */
export function csvMoney(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** The headers of a CSV download: a file to save, never cached (it holds customers' data). */
export const csvHeaders = (fileName: string) => ({
  'Content-Type': 'text/csv; charset=utf-8',
  'Content-Disposition': `attachment; filename="${fileName}"`,
  'Cache-Control': 'no-store',
});
