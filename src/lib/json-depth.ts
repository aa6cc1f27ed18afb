import { validationFailed } from './errors';

// JSON from outside is refused when nested deeper than MAX_JSON_DEPTH, before anything parses or walks it: recursive
// code (a re-serialisation for a signature, a schema, a reviver) over a body nested thousands deep overflows the
// stack. The check is one linear pass over the text with a counter, so it cannot overflow itself.

/** The deepest nesting of arrays and objects a JSON body may have (depth 1: `{}` or `[]`). */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `The body is not valid JSON: it is nested deeper than ${MAX_JSON_DEPTH} levels.`;

/**
 * Whether JSON text opens more than `limit` arrays or objects inside each other. Brackets inside strings do not
 * count (a string ends at an unescaped quote). Text that is not JSON is judged by its brackets all the same: it is
 * refused here or by the parser afterwards.
 */
export function nestedDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (ch === 0x5d /* ] */ || ch === 0x7d /* } */) depth--;
  }
  return false;
}

/** A 422 `VALIDATION_FAILED` on `body` for JSON text nested too deep; nothing has read it yet. */
export function refuseDeepJson(text: string): void {
  if (nestedDeeperThan(text)) throw validationFailed({ body: [TOO_DEEP_MESSAGE] }, TOO_DEEP_MESSAGE);
}
