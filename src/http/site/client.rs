//! The browser side, served by errand itself: the JavaScript client
//! (`/client/errand.js`), its web components (`/client/errand-elements.js`,
//! which imports one module per element and their shared base),
//! the demo page at `/` that uses both, and the operators' console at
//! `/admin` (`admin.html` and its `admin*.js` modules). The files live in
//! `assets/client/` and are embedded in release builds, so a deployment needs
//! no CDN and no build step; debug builds read them from the source tree on
//! every request, so a page reload shows an edited file without a rebuild.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use crate::http::support::error::AppError;

/// The files under `/client/`, with their media types.
const FILES: &[(&str, &str)] = &[
    ("errand.js", "text/javascript; charset=utf-8"),
    ("errand-elements.js", "text/javascript; charset=utf-8"),
    ("errand-element-base.js", "text/javascript; charset=utf-8"),
    ("errand-bell.js", "text/javascript; charset=utf-8"),
    ("errand-export-button.js", "text/javascript; charset=utf-8"),
    ("errand-preferences.js", "text/javascript; charset=utf-8"),
    ("errand-schedule.js", "text/javascript; charset=utf-8"),
    ("demo.js", "text/javascript; charset=utf-8"),
    ("demo.css", "text/css; charset=utf-8"),
    ("admin.js", "text/javascript; charset=utf-8"),
    ("admin-api.js", "text/javascript; charset=utf-8"),
    ("admin-dom.js", "text/javascript; charset=utf-8"),
    ("admin-overview.js", "text/javascript; charset=utf-8"),
    ("admin-jobs.js", "text/javascript; charset=utf-8"),
    ("admin-bulk.js", "text/javascript; charset=utf-8"),
    ("admin-job.js", "text/javascript; charset=utf-8"),
    ("admin-audit.js", "text/javascript; charset=utf-8"),
    ("admin.css", "text/css; charset=utf-8"),
];

/// The demo page reaches nothing but errand: scripts and styles from
/// `/client/`, requests and the event stream to errand's API. Download links
/// go wherever the storage backend signs them for (an S3 host), which is a
/// navigation, not a fetch, so `connect-src` need not name it.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#[cfg(not(debug_assertions))]
fn read(name: &str) -> Option<std::borrow::Cow<'static, [u8]>> {
    macro_rules! embedded {
        ($($file:literal),*) => {
            match name {
                $($file => Some(std::borrow::Cow::Borrowed(include_bytes!(concat!("../../assets/client/", $file)).as_slice())),)*
                _ => None,
            }
        };
    }
    embedded!(
        "index.html",
        "errand.js",
        "errand-elements.js",
        "errand-element-base.js",
        "errand-bell.js",
        "errand-export-button.js",
        "errand-preferences.js",
        "errand-schedule.js",
        "demo.js",
        "demo.css",
        "admin.html",
        "admin.js",
        "admin-api.js",
        "admin-dom.js",
        "admin-overview.js",
        "admin-jobs.js",
        "admin-bulk.js",
        "admin-job.js",
        "admin-audit.js",
        "admin.css"
    )
}

#[cfg(debug_assertions)]
fn read(name: &str) -> Option<std::borrow::Cow<'static, [u8]>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/client").join(name);
    std::fs::read(path).ok().map(std::borrow::Cow::Owned)
}

/// `GET /`: the demo page (no token needed: it signs in in the browser).
pub async fn demo_page() -> Result<HttpResponse, AppError> {
    page("index.html")
}

/// `GET /admin`: the operators' console (no token needed to load it: it
/// signs in in the browser, with an operator token, and every request it
/// makes is checked as any other).
pub async fn admin_page() -> Result<HttpResponse, AppError> {
    page("admin.html")
}

fn page(name: &str) -> Result<HttpResponse, AppError> {
    let page = read(name).ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(page.into_owned()))
}

/// `GET /client/{file}`: the client, its components and the demo's script
/// and style. `no-cache` makes browsers revalidate, so an upgraded errand's
/// client is picked up at once.
pub async fn file(req: HttpRequest) -> Result<HttpResponse, AppError> {
    let name = req.match_info().get("file").unwrap_or_default();
    let (name, media_type) = FILES.iter().find(|(file, _)| *file == name).ok_or(AppError::NotFound)?;
    let body = read(name).ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok()
        .content_type(*media_type)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .body(body.into_owned()))
}
