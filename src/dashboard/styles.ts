// The dashboard's one stylesheet and its icon. Served by the worker (GET /dashboard/assets/...) until the
// static-assets folder exists; they are constants, so moving them there is a copy. No inline styles anywhere: the CSP
// allows only this file. The icon spares browsers a request for /favicon.ico (a 404, and an error in their console).

export const STYLESHEET_PATH = '/dashboard/assets/app.css';
export const ICON_PATH = '/dashboard/assets/icon.svg';

export const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fd6"/><path d="M21 11.5c-1-1.6-2.9-2.5-5-2.5-3 0-5 1.6-5 3.8 0 5 10 2.6 10 7.4 0 2.2-2.1 3.8-5 3.8-2.3 0-4.3-1-5.3-2.8" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round"/></svg>`;

export const STYLESHEET = `
:root {
  --ink: #1b1d21; --muted: #5b616e; --line: #d9dce2; --paper: #ffffff; --wash: #f5f6f8;
  --accent: #1f5fd6; --accent-ink: #ffffff; --danger: #b3261e; --ok: #0a7d38; --warn: #8a5a00;
  color-scheme: light;
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--wash); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--paper); padding: 0.5rem 1rem; }
.skip:focus { left: 0.5rem; z-index: 1; }

.top { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1.25rem; padding: 0.75rem 1rem; background: var(--paper); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; color: var(--ink); }
.top nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a { text-decoration: none; padding: 0.25rem 0; }
.top nav a[aria-current="page"] { font-weight: 700; border-bottom: 2px solid var(--accent); }
.sign-out { margin-left: auto; }

main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 0.75rem; }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 1rem; margin-bottom: 1rem; }
.card > :first-child { margin-top: 0; }
.card > :last-child { margin-bottom: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.narrow { max-width: 26rem; }

.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 0.75rem; margin: 0 0 1rem; }
.stats div { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 0.75rem 1rem; }
.stats dt { color: var(--muted); font-size: 0.9rem; }
.stats dd { margin: 0; font-size: 1.4rem; font-weight: 700; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }

.table-wrap { overflow-x: auto; background: var(--paper); border: 1px solid var(--line); border-radius: 10px; }
table { width: 100%; border-collapse: collapse; }
caption { text-align: left; padding: 0.75rem 1rem 0; font-weight: 600; }
th, td { text-align: left; padding: 0.5rem 1rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 0.9rem; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; white-space: nowrap; }
.money { font-variant-numeric: tabular-nums; white-space: nowrap; }
time { white-space: nowrap; }
.empty { color: var(--muted); }

.field { margin-bottom: 0.9rem; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
input, select { font: inherit; width: 100%; max-width: 26rem; padding: 0.55rem 0.7rem; border: 1px solid #9aa0ab; border-radius: 8px; background: var(--paper); color: var(--ink); }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--danger); }
.field-error { color: var(--danger); margin: 0.25rem 0 0; }
button { font: inherit; font-weight: 600; padding: 0.55rem 1.1rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); cursor: pointer; min-height: 2.5rem; }
button.secondary { background: var(--paper); color: var(--accent); }
button.danger { background: var(--paper); color: var(--danger); border-color: var(--danger); }
button:disabled { opacity: 0.5; cursor: not-allowed; }
.inline { display: inline; }
.row { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; }
.row .field { flex: 1 1 10rem; margin-bottom: 0; }

.alert { border: 1px solid var(--danger); background: #fdecea; color: var(--danger); border-radius: 8px; padding: 0.6rem 0.9rem; }
.notice { border: 1px solid var(--ok); background: #e8f5ec; color: var(--ok); border-radius: 8px; padding: 0.6rem 0.9rem; }
.secret { display: block; font: 0.95rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--wash); border: 1px dashed var(--ink); border-radius: 8px; padding: 0.75rem; overflow-wrap: anywhere; user-select: all; }
.items { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; padding-left: 1.5rem; }
.status { display: inline-block; padding: 0 0.5rem; border-radius: 999px; font-size: 0.85rem; font-weight: 600; border: 1px solid currentColor; }
.status-pending { color: var(--warn); }
.status-completed, .status-paid { color: var(--ok); }
.status-cancelled, .status-failed, .status-expired { color: var(--muted); }

.products { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 0.75rem; }
.products li { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 1rem; display: flex; flex-direction: column; gap: 0.5rem; }
.products h2 { margin: 0; font-size: 1.05rem; }
.products p { margin: 0; color: var(--muted); }
.products form { margin-top: auto; }
.pager { display: flex; justify-content: space-between; align-items: center; margin: 0.75rem 0; }
.muted { color: var(--muted); }

@media (max-width: 40rem) {
  .top { padding: 0.6rem 0.75rem; }
  main { padding: 0.75rem; }
  th, td { padding: 0.45rem 0.6rem; }
  .hide-narrow { display: none; }
}
`;
