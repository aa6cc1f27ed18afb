/** Vite's `?raw` imports: a file's text (used by test/security.test.ts to read the comparison code). */
declare module '*?raw' {
  const source: string;
  export default source;
}
