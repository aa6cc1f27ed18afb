import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { swaggerUiBundle, swaggerUiCss, swaggerUiVersion } from '../generated/swagger-ui';

// The interactive reference for GET /api/v2/openapi.json, with Swagger UI's assets served by the worker itself.

const ASSET_CACHE = 'public, max-age=86400, immutable';

const page = (specUrl: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stock Wallet API v2 reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css?v=${swaggerUiVersion}">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js?v=${swaggerUiVersion}"></script>
<script>
  window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false });
</script>
</body>
</html>`;

export function createDocsRouter(specUrl: string) {
  return new Hono<AppEnv>()
    .get('/', (c) => c.html(page(specUrl)))
    .get('/swagger-ui-bundle.js', (c) =>
      c.body(swaggerUiBundle, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': ASSET_CACHE }),
    )
    .get('/swagger-ui.css', (c) => c.body(swaggerUiCss, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': ASSET_CACHE }));
}
