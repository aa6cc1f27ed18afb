import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes `content` to `path` unless the file already holds exactly that; true when it wrote. Generated files under
 * public/ and src/ are watched by a running `npm run dev` (any write there reloads it), so a script that runs again
 * with nothing new to say (the e2e suite's own `npm run dev`, a second install) must leave them untouched.
 */
export function writeIfChanged(path, content) {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (existsSync(path) && readFileSync(path).equals(bytes)) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return true;
}
