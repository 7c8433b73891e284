// Starts Swagger UI on /api/v1/docs. A file of our origin, not an inline script, so the
// Content-Security-Policy needs no nonce (script-src 'self').
(function () {
  "use strict";
  window.ui = SwaggerUIBundle({
    url: document.getElementById("swagger-ui").dataset.openapi,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
})();
