import type { SerializedError } from 'vitest';
import { DefaultReporter, type TestModule, type TestRunEndReason } from 'vitest/node';

// What `npm test` prints, in one place (used by vitest.config.ts, vitest.e2e.config.ts and vitest.node.config.ts).
//
// A passing run prints the banner and the totals of each suite, nothing else:
//   - QuietReporter names a test file only when it failed (with its failed tests, their errors and their logs);
//   - what a passing test logs is dropped by vitest itself (`silent: 'passed-only'`), and a test that provokes a log
//     on purpose asserts it (test/logs.ts);
//   - workerd writes a few lines to its own output that no test can capture (the pool copies them straight to the
//     terminal). The ones listed in KNOWN_WORKERD_LINES, and only those, are held back; every other line prints.
//     When the run fails, the held-back lines are printed after the failures, so a failing run still shows all.
//
// TEST_VERBOSE=1 turns all of this off: every file and every workerd line, as vitest prints them by default.
export const VERBOSE = /^(1|true|yes)$/i.test(process.env.TEST_VERBOSE ?? '');

/**
 * workerd's own lines that say nothing about our code, each with why. Exact patterns, anchored: a line that does not
 * match one of them prints as usual.
 */
export const KNOWN_WORKERD_LINES: Array<{ why: string; pattern: RegExp }> = [
  {
    // Seen only after test/api/contract-fuzz.test.ts has ended with every test passed (10 of each of these three lines,
    // none during a test): work the fuzzed requests left running in the file's runtime (an outbound call, a queued
    // delivery) loses its connection when the pool moves on to the next file, and workerd reports it with no test to
    // attribute it to. Which request leaves it is not pinned down yet (short runs of the same calls do not show it).
    why: 'leftover work of a finished test file losing its connection to the test pool',
    pattern: /^exception = rust\/worker\/ffi\.rs:\d+: disconnected: Connection refused \(os error 111\)$/,
  },
  {
    why: 'the same, as the worker sees it',
    pattern: /^uncaught exception; source = Uncaught \(in promise\); stack = Error: Network connection lost\.$/,
  },
  {
    why: 'the same, as the worker sees it',
    pattern: /^uncaught exception; exception = workerd\/jsg\/value\.h:\d+: disconnected: jsg\.Error: Network connection lost\.$/,
  },
];

/** The native stack workerd prints under an exception line: addresses in its own binary, nothing to read. */
const WORKERD_STACK = /^stack:( \S*\/workerd@[0-9a-f]+)+$/;

let installed = false;
/** Lines held back, with how often each was seen: printed only when the run fails. */
export const held = new Map<string, number>();

type Writable = { write: (chunk: never, ...rest: never[]) => boolean };

/**
 * Holds back the known workerd lines written to this process's stdout and stderr (where the pool copies workerd's
 * output). A native stack line is held back only right after a held-back exception line.
 */
export function holdBackKnownWorkerdLines() {
  if (VERBOSE || installed) return;
  installed = true;
  holdBackIn(process.stdout);
  holdBackIn(process.stderr);
}

/** Wraps one stream's `write`: the known lines of each chunk are kept in `held`, the others written. */
export function holdBackIn(stream: Writable) {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let afterHeld = false;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return write(chunk, ...rest);
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const lines = text.split('\n');
    const last = lines.pop() ?? '';
    const kept: string[] = [];
    for (const line of lines) {
      const known = KNOWN_WORKERD_LINES.some(({ pattern }) => pattern.test(line)) || (afterHeld && WORKERD_STACK.test(line));
      if (known) held.set(line, (held.get(line) ?? 0) + 1);
      else kept.push(line);
      afterHeld = known;
    }
    // Nothing held back: the chunk is passed on as it is (vitest's live summary, a line without its newline yet).
    if (kept.length === lines.length) return write(chunk, ...rest);
    const out = kept.map((line) => `${line}\n`).join('') + last;
    if (out === '') {
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }
    return write(out, ...rest);
  }) as Writable['write'];
}

/**
 * The default reporter, minus the line per passing test file: a failed file is printed in full, as are the totals,
 * unhandled errors and the slow tests of a failed file. After a failed run, the held-back workerd lines follow.
 */
export class QuietReporter extends DefaultReporter {
  // Outside a terminal (CI, a log file) vitest shows no live summary, so a long suite would print nothing for many
  // minutes: a dot per passing file, all on one line, says it is alive.
  private dots = 0;

  private endDots() {
    if (this.dots > 0) process.stdout.write('\n');
    this.dots = 0;
  }

  override printTestModule(testModule: TestModule) {
    if (testModule.state() === 'failed') {
      this.endDots();
      super.printTestModule(testModule);
    } else if (!process.stdout.isTTY) {
      process.stdout.write('.');
      this.dots += 1;
    }
  }

  override onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason) {
    this.endDots();
    const failed = unhandledErrors.length > 0 || testModules.some((testModule) => testModule.state() === 'failed');
    if (failed && held.size > 0) {
      this.log(`\nworkerd lines held back as known (test/node/quiet-output.ts), shown because the run failed:`);
      for (const [line, count] of held) this.log(count > 1 ? `${line}  (x${count})` : line);
    }
    super.onTestRunEnd(testModules, unhandledErrors, reason);
  }
}

/** The `reporters` of a vitest config: vitest's default with TEST_VERBOSE=1, QuietReporter otherwise. */
export const reporters = () => (VERBOSE ? ['default'] : [new QuietReporter()]);
