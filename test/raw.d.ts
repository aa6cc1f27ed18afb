// Files imported as text by Vite (`?raw`), e.g. wrangler.toml in the tests of its settings.
declare module '*?raw' {
  const text: string;
  export default text;
}
