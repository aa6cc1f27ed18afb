// What the deployed bundle gets instead of zod's locale index (wrangler.toml [alias]). zod exposes every one of its
// ~40 error-message locales as `z.locales` / `z.core.locales`, a namespace bundlers cannot tree-shake (~260 KB
// minified, 40% of the worker). The service answers in English only: zod registers `en` through its own direct
// import, and `z.locales.en` keeps working through this re-export.
export { default as en } from 'zod/v4/locales/en.js';
