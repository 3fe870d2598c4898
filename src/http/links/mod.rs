//! The tokenless links errand hands out, each its own authorisation: a
//! completion email's link to its job (`job_link.rs`), one-click unsubscribe,
//! a schedule's pause link, and the signed downloads of the `local` storage
//! backend (`files.rs`); and the pages for people they answer (`pages.rs`).

pub mod files;
pub mod job_link;
pub mod pages;
pub mod schedule_pause;
pub mod unsubscribe;
