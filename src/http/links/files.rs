//! `/files/<key>?expires=&name=&sig=`: downloads of the `local` storage
//! backend, for whoever holds a valid signed URL (no token: the signature is
//! the authorisation, and it names exactly one object until it expires).

use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::{HttpResponse, web};
use serde::Deserialize;

use crate::http::AppState;
use crate::http::support::problem::AppError;
use crate::storage::SignedFileError;

#[derive(Deserialize)]
pub struct SignedQuery {
    expires: u64,
    name: String,
    sig: String,
}

/// Streams the file a signed URL names; 403 for a bad or expired signature, 410 once deleted.
#[utoipa::path(get, path = "/files/{key}", tag = "jobs",
    params(("key" = String, Path, description = "The file's storage key"),
        ("expires" = u64, Query, description = "When the link expires, seconds since the epoch"),
        ("name" = String, Query, description = "The file name a download is saved as"),
        ("sig" = String, Query, description = "The link's signature: the only authorisation")),
    responses((status = 200, description = "The file", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 403, description = "Tampered or expired link (`forbidden`)", body = crate::http::support::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "Not a local-storage deployment, or no such file (`not_found`)", body = crate::http::support::problem::Problem, content_type = "application/problem+json"),
        (status = 410, description = "Deleted at the end of its retention (`result_expired`)", body = crate::http::support::problem::Problem, content_type = "application/problem+json")))]
pub async fn download(
    path: web::Path<String>,
    query: Result<web::Query<SignedQuery>, actix_web::Error>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let refused = |reason: &str| AppError::Forbidden(reason.to_owned());
    let local = state.storage.local().ok_or(AppError::NotFound)?;
    let query = query.map_err(|_| refused("the download link is incomplete"))?;
    let file = match local.verify(&path, query.expires, &query.name, &query.sig).await {
        Ok(file) => file,
        Err(SignedFileError::Gone) => return Err(AppError::ResultExpired),
        Err(other) => return Err(refused(&other.to_string())),
    };
    // (Opened as it streams when sealed: a tenant erased meanwhile has no key, and no file.)
    let opened = local.read(&file).await.map_err(|_| AppError::ResultExpired)?;
    let content_type = match file.path.extension().and_then(|e| e.to_str()) {
        Some("csv") => "text/csv; charset=utf-8",
        Some("ndjson") => "application/x-ndjson",
        _ => "application/octet-stream",
    };
    // Names are checked when a worker gives them; one stored before that
    // check still must not break the header.
    let file_name = file.file_name.replace(char::is_control, "_");
    let disposition = ContentDisposition {
        disposition: DispositionType::Attachment,
        parameters: vec![DispositionParam::Filename(file_name)],
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header(disposition)
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        // A file is whatever a job wrote: never sniffed into HTML, and if a
        // browser renders it anyway, in a sandbox with nothing allowed.
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'"))
        .streaming(opened))
}
