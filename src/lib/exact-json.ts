// Numbers read as written. A plain JSON.parse rounds `1.999999999999999999` to 2 and `12345678901234567890` to
// 12345678901234567000 before any schema sees them, so an amount with more digits than cents could pass as a clean
// $2.00. workerd's JSON.parse hands a reviver each primitive's source text; a number whose text says more than the
// double it becomes is kept out of the schemas' way as an InexactNumber, which no number schema accepts.

/** A JSON number whose text a double cannot hold exactly; `text` is what the client wrote. */
export class InexactNumber {
  constructor(readonly text: string) {}

  /** Whether the text states digits after the decimal point (`1.999999999999999999`), not just a huge whole number. */
  get hasFraction(): boolean {
    return Number(canonical(this.text)?.split('e')[1] ?? 0) < 0;
  }
}

const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Decimal text as `<sign><significant digits>e<exponent>`, so two spellings of one value (`5.000`, `5`, `0.5e1`) are equal. */
function canonical(text: string): string | null {
  const match = NUMBER_TEXT.exec(text);
  if (!match) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  let power = Number(exponent) - fraction.length;
  if (digits === '') return '0';
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  power += trailing;
  return `${sign}${digits}e${power}`;
}

/** Number text (JSON's grammar) as the number it states, or an InexactNumber when reading it would round it. */
export function readNumber(text: string): number | InexactNumber {
  const value = Number(text);
  const exact = Number.isFinite(value) && canonical(text) !== null && canonical(text) === canonical(String(value));
  return exact ? value : new InexactNumber(text);
}

/** JSON.parse, with every number checked against its source text (see readNumber). */
export function parseJsonExactly(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? readNumber(context.source) : value,
  );
}
