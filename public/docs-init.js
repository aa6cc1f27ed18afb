// The API reference at /docs: Swagger UI on the service's own OpenAPI document. A file of its own, not an inline
// script, so the page's Content-Security-Policy (public/_headers) can allow scripts from this origin only.
window.ui = SwaggerUIBundle({ url: '/api/v2/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false });
