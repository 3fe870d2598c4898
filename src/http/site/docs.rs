//! `GET /docs`: the OpenAPI document for people, rendered by Redoc. Its
//! bundle is vendored in `assets/redoc/` (version and licence there) and
//! embedded in the binary, so the page needs no CDN and works offline.
//! Paths in the page are relative, so it also works behind a path prefix.

use actix_web::HttpResponse;
use actix_web::http::header;

/// The bundle's file name, in `assets/redoc/` and under `/docs/`. It carries
/// the version, so a browser may keep it for good.
macro_rules! redoc_bundle {
    () => {
        "redoc-2.5.2.standalone.js"
    };
}

pub const REDOC_BUNDLE: &str = redoc_bundle!();
const REDOC_JS: &[u8] = include_bytes!(concat!("../../../assets/redoc/", redoc_bundle!()));

const PAGE: &str = concat!(
    r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>errand API</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="docs/"#,
    redoc_bundle!(),
    r#""></script>
</body>
</html>
"#
);

/// Only errand's own files, so the page fetches nothing from elsewhere (the
/// bundle would show a logo from Redocly's CDN; blocked, it is left out).
/// Redoc styles with inline styles and searches in a blob worker.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The API page (no token needed, like the document it shows).
pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .body(PAGE)
}

/// Redoc's bundle.
pub async fn redoc() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .body(REDOC_JS)
}
