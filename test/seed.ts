// Seeds of the randomized tests. Each test file pins its own, so every run generates the same cases and a failure
// reproduces; `SEED=<integer> npx vitest run <file>` runs another set (vitest.config.ts passes SEED through as
// import.meta.env.SEED: process.env does not reach workerd). The seed in use is printed either way.

export const testSettings = ((import.meta as unknown as { env?: Record<string, string | undefined> }).env ?? {}) as Record<string, string | undefined>;

/** The file's pinned seed, or SEED from the environment; printed with the command that replays it. */
export function seedFor(file: string, pinned: number): number {
  const override = testSettings.SEED;
  if (override !== undefined && !/^-?\d{1,10}$/.test(override)) throw new Error(`SEED must be an integer, got "${override}"`);
  const seed = override === undefined ? pinned : Number(override) | 0;
  console.log(`[${file}] seed=${seed}${override === undefined ? ' (pinned)' : ' (from SEED)'}: reproduce with SEED=${seed} npx vitest run test/${file}`);
  return seed;
}
