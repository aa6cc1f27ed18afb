// Types of scripts/static-assets.mjs, for the test configs that run it (vitest.config.ts).
export function buildStaticAssets(): Record<string, string>;
