// Copies Swagger UI's browser bundle and stylesheet from swagger-ui-dist into public/vendor/swagger-ui/, where
// Workers Static Assets serve them to the /docs page (public/docs.html) without running the worker and without a
// CDN. Runs on `npm install` (postinstall) and at every `npm run dev`; the copy is generated, not committed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeIfChanged } from './write-if-changed.mjs';

const require = createRequire(import.meta.url);
const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'vendor', 'swagger-ui');

export function vendorDocs() {
  const { version } = JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'));
  // Only what differs is written: public/ is watched by a running `npm run dev`, and any write there reloads it.
  for (const name of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt']) writeIfChanged(join(out, name), readFileSync(join(dist, name)));
  // The source maps are not copied, so the stylesheet must not point a browser at one.
  const css = readFileSync(join(dist, 'swagger-ui.css'), 'utf8').replace(/\/\*# sourceMappingURL=.*\*\/\s*$/, '');
  writeIfChanged(join(out, 'swagger-ui.css'), css);
  return version;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`vendor-docs: copied swagger-ui-dist ${vendorDocs()} to public/vendor/swagger-ui/`);
}
