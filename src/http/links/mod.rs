//! The tokenless links errand hands out, each its own authorisation: a
//! completion email's link to its job (`job_link.rs`), one-click unsubscribe,
//! a schedule's pause link, and the signed downloads of the `local` storage
//! backend (`files.rs`); and the pages for people they answer (`pages.rs`).

pub mod files;
pub mod job_link;
pub mod pages;
pub mod schedule_pause;
pub mod unsubscribe;

use actix_web::web;

use crate::http::support::routing::Routes;

/// The links' own paths (a schedule's pause link is under `/schedules`).
pub fn routes(r: &mut Routes) {
    r.get("/files/{key:.*}", files::download).get("/links/jobs/{id}", job_link::open).resource(
        "/unsubscribe/{token}",
        "GET, HEAD, POST",
        |res| {
            res.route(web::get().to(unsubscribe::ask))
                .route(web::head().to(unsubscribe::ask))
                .route(web::post().to(unsubscribe::confirm))
        },
    );
}
