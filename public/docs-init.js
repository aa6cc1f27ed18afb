// The API reference at /docs: Swagger UI on the service's own OpenAPI document. A file of its own, not an inline
// script, so the page's Content-Security-Policy (public/_headers) can allow scripts from this origin only.
// The sections start folded (`docExpansion: 'none'`): with every section open, Swagger UI 5 stops rendering a document
// of this many operations after the first few (about 170 here: the API, the admin routes and the pages).
window.ui = SwaggerUIBundle({ url: '/api/v2/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false, docExpansion: 'none' });
