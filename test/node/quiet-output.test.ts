import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DefaultReporter, type TestModule } from 'vitest/node';
import { held, holdBackIn, QuietReporter } from './quiet-output';

// The filter of `npm test`'s output: only the known workerd lines are held back, everything else is written.

const KNOWN_EXCEPTION = 'exception = rust/worker/ffi.rs:110: disconnected: Connection refused (os error 111)';
const NATIVE_STACK = 'stack: /x/node_modules/@cloudflare/workerd-linux-64/bin/workerd@28a3c60 /x/bin/workerd@3ac7580';

function stream() {
  const written: string[] = [];
  const target = { write: (chunk: string) => (written.push(chunk), true) };
  holdBackIn(target);
  return { write: (text: string) => target.write(text as never), written };
}

describe('npm test output filter', () => {
  beforeEach(() => held.clear());

  it('holds back a known workerd line and the native stack under it, and counts them', () => {
    const out = stream();
    out.write(`${KNOWN_EXCEPTION}\n${NATIVE_STACK}\n`);
    out.write(`${KNOWN_EXCEPTION}\n`);
    expect(out.written.join('')).toBe('');
    expect(held.get(KNOWN_EXCEPTION)).toBe(2);
    expect(held.get(NATIVE_STACK)).toBe(1);
  });

  it('writes every other line, in order, with the known ones taken out', () => {
    const out = stream();
    out.write(`FAIL test/x.test.ts\n${KNOWN_EXCEPTION}\nAssertionError: expected 1 to be 2\n`);
    expect(out.written.join('')).toBe('FAIL test/x.test.ts\nAssertionError: expected 1 to be 2\n');
  });

  it('keeps a native stack under a line it does not know, and a near miss of a known line', () => {
    const out = stream();
    const other = 'exception = rust/worker/ffi.rs:110: disconnected: Connection reset by peer';
    out.write(`${other}\n${NATIVE_STACK}\n${KNOWN_EXCEPTION} and more\n`);
    expect(out.written.join('')).toBe(`${other}\n${NATIVE_STACK}\n${KNOWN_EXCEPTION} and more\n`);
    expect(held.size).toBe(0);
  });

  it('passes a chunk without a newline through untouched (a live summary)', () => {
    const out = stream();
    out.write('\u001b[2K Test Files 3 passed');
    expect(out.written).toEqual(['\u001b[2K Test Files 3 passed']);
  });
});

describe('QuietReporter', () => {
  beforeEach(() => held.clear());

  /** What the reporter prints at the end of a run whose files ended in `states` (vitest's own summary left out). */
  function endOfRun(states: Array<'passed' | 'failed'>, unhandled: unknown[] = []) {
    vi.spyOn(DefaultReporter.prototype, 'onTestRunEnd').mockImplementation(() => {});
    const reporter = new QuietReporter({ isTTY: false });
    const printed: string[] = [];
    reporter.log = (...messages: unknown[]) => void printed.push(messages.join(' '));
    const modules = states.map((state) => ({ state: () => state }) as unknown as TestModule);
    reporter.onTestRunEnd(modules, unhandled as never, 'passed');
    vi.restoreAllMocks();
    return printed.join('\n');
  }

  it('prints the held-back workerd lines, with their counts, when a file failed or an error escaped', () => {
    stream().write(`${KNOWN_EXCEPTION}\n${KNOWN_EXCEPTION}\n`);
    expect(endOfRun(['passed', 'failed'])).toContain(`${KNOWN_EXCEPTION}  (x2)`);
    expect(endOfRun(['passed'], [{ message: 'boom' }])).toContain(KNOWN_EXCEPTION);
  });

  it('prints nothing of them when every file passed', () => {
    stream().write(`${KNOWN_EXCEPTION}\n`);
    expect(endOfRun(['passed', 'passed'])).toBe('');
  });
});
