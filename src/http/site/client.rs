//! The browser side, served by errand itself: the JavaScript client
//! (`/client/errand.js`), its web components (`/client/errand-elements.js`,
//! which registers the elements of `elements/`), the helpers both share
//! (`core/`), the demo page at `/` that uses them, and the operators' console
//! at `/admin` (`admin.html` and the modules of `admin/`). The files live in
//! `assets/client/`, are listed nowhere but there, and are embedded in
//! release builds, so a deployment needs no CDN and no build step; debug
//! builds read them from the source tree on every request, so a page reload
//! shows an edited file without a rebuild.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use rust_embed::RustEmbed;

use crate::http::support::problem::AppError;

/// Everything under `assets/client/`: embedded in release builds, read from
/// the source tree on each request in debug builds (rust-embed's own rule).
#[derive(RustEmbed)]
#[folder = "assets/client/"]
struct ClientFiles;

/// What `/client/` serves, by extension: scripts and styles only. The pages
/// (`index.html`, `admin.html`) are served at `/` and `/admin`, with their
/// content security policy, never as files.
fn media_type(name: &str) -> Option<&'static str> {
    match name.rsplit_once('.')?.1 {
        "js" => Some("text/javascript; charset=utf-8"),
        "css" => Some("text/css; charset=utf-8"),
        _ => None,
    }
}

/// A path under `assets/client/` as the route gives it: plain segments only,
/// so no `..` or absolute path reaches the source tree in a debug build.
fn is_plain_path(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != ".." && !segment.contains('\\'))
}

fn read(name: &str) -> Option<std::borrow::Cow<'static, [u8]>> {
    is_plain_path(name).then(|| ClientFiles::get(name)).flatten().map(|file| file.data)
}

/// The demo page reaches nothing but errand: scripts and styles from
/// `/client/`, requests and the event stream to errand's API. Download links
/// go wherever the storage backend signs them for (an S3 host), which is a
/// navigation, not a fetch, so `connect-src` need not name it.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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

/// `GET /client/{path}`: the client, its modules and the demo's and the
/// console's scripts and styles. `no-cache` makes browsers revalidate, so an
/// upgraded errand's client is picked up at once.
pub async fn file(req: HttpRequest) -> Result<HttpResponse, AppError> {
    let name = req.match_info().get("path").unwrap_or_default();
    let media_type = media_type(name).ok_or(AppError::NotFound)?;
    let body = read(name).ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok()
        .content_type(media_type)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .body(body.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_under_the_client_folder_are_read() {
        assert!(is_plain_path("errand.js"));
        assert!(is_plain_path("core/dom.js"));
        for refused in
            ["", "../Cargo.toml", "core/../../Cargo.toml", "/etc/passwd", "core//dom.js", "./errand.js", "a\\b.js"]
        {
            assert!(!is_plain_path(refused), "{refused}");
            assert!(read(refused).is_none(), "{refused}");
        }
    }

    #[test]
    fn pages_are_not_served_as_files() {
        assert_eq!(media_type("index.html"), None);
        assert_eq!(media_type("errand.js"), Some("text/javascript; charset=utf-8"));
        assert!(read("errand.js").is_some());
    }
}
