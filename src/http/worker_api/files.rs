//! Result files of external workers: streamed through errand
//! (`PUT …/result`, both backends) or put straight into the bucket through a
//! presigned URL (`POST …/result-url`, S3), checked when the attempt completes.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::domain::{JobId, LeaseId};
use crate::http::AppState;
use crate::http::auth::ExternalWorker;
use crate::http::job_id;
use crate::http::support::body::json as read_json;
use crate::http::support::problem::{AppError, Problem, WorkerCallProblems};
use crate::storage::{ObjectKey, ResultFile};
use crate::store::RunningAttempt;

#[derive(Deserialize)]
pub struct UploadQuery {
    lease_id: Uuid,
    file_name: String,
}

/// `PUT /worker/v1/jobs/{id}/result?lease_id=&file_name=`: the attempt's
/// output file, streamed into errand's storage (constant memory) with the
/// request's `Content-Type`. When the attempt completes, the file is the
/// job's result: its owner downloads it through a fresh signed URL, and it is
/// deleted after the result retention, as an export's is.
#[utoipa::path(put, path = "/worker/v1/jobs/{id}/result", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id"),
        ("lease_id" = String, Query, format = Uuid, description = "The attempt's lease"),
        ("file_name" = String, Query, description = "What a download is saved as, e.g. `invoice-42.pdf`")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The file"),
    responses((status = 200, description = "Stored; the job's result once it completes", body = Object),
        (status = 400, description = "A bad query, e.g. a `file_name` with a control character (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems,
        (status = 413, description = "Over `[storage] max_upload_bytes` (`payload_too_large`; nothing is kept)", body = Problem, content_type = "application/problem+json")))]
pub async fn upload(
    worker: ExternalWorker,
    req: actix_web::HttpRequest,
    path: web::Path<String>,
    query: web::Query<UploadQuery>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let UploadQuery { lease_id, file_name } = query.into_inner();
    let lease = LeaseId(lease_id);
    check_file_name(&file_name)?;
    let queue = state.store.queue();
    let running =
        crate::http::worker_api::check_type_held(&state, &worker, id, lease).await?.ok_or(AppError::LeaseLost)?;
    let content_type = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let key = ObjectKey::for_upload(&running.tenant, id, lease, extension_of(&file_name));
    // Why the body stopped, when it was the body (too large, too slow), not the storage.
    let refused = std::rc::Rc::new(std::cell::Cell::new(None));
    let stored =
        state.storage.put(&key, &content_type, capped(body, state.settings.max_upload_bytes, refused.clone())).await;
    let stored = match (stored, refused.take()) {
        (Ok(stored), None) => stored,
        (_, Some(refusal)) => {
            let _ = state.storage.delete(&key).await;
            return Err(refusal);
        }
        (Err(e), None) => return Err(AppError::Unavailable(e.to_string())),
    };
    let file = ResultFile {
        storage_key: key.as_str().to_owned(),
        size_bytes: stored.size_bytes,
        row_count: 0,
        content_type,
        file_name,
        expires_at: chrono::Utc::now()
            + chrono::Duration::from_std(result_retention(&state, &running.job_type)).unwrap_or_default(),
        expired: false,
    };
    let file = serde_json::to_value(&file).map_err(|e| AppError::Internal(e.to_string()))?;
    if !queue.keep_upload(id, lease, &file).await? {
        // Lost while uploading: the file is no one's.
        let _ = state.storage.delete(&key).await;
        return Err(AppError::LeaseLost);
    }
    Ok(HttpResponse::Ok().json(file))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadUrlBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// What a download is saved as.
    file_name: String,
    /// The file's media type (default `application/octet-stream`).
    content_type: Option<String>,
}

/// Where to PUT the file, until when.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UploadUrl {
    url: String,
    /// `PUT`.
    method: &'static str,
    expires_at: String,
}

/// `POST /worker/v1/jobs/{id}/result-url`: with the S3 backend, a presigned
/// URL to PUT the attempt's output file straight into the bucket (nothing
/// passes through errand). `/complete` then checks that the object is there
/// and makes it the job's result. The local backend answers 400: upload
/// through `PUT /worker/v1/jobs/{id}/result` instead.
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/result-url", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = UploadUrlBody,
    responses((status = 200, description = "Where to PUT the file", body = UploadUrl),
        (status = 400, description = "A bad body, or not an S3 deployment (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems))]
pub async fn upload_url(
    worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: UploadUrlBody = read_json(body).await?;
    let lease = LeaseId(body.lease_id);
    check_file_name(&body.file_name)?;
    let queue = state.store.queue();
    let running =
        crate::http::worker_api::check_type_held(&state, &worker, id, lease).await?.ok_or(AppError::LeaseLost)?;
    let key = ObjectKey::for_upload(&running.tenant, id, lease, extension_of(&body.file_name));
    let expires_in = state.settings.url_expiry;
    let url = state.storage.upload_url(&key, expires_in).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    let Some(url) = url else {
        return Err(AppError::BadRequest(
            "this errand stores files locally: upload through PUT /worker/v1/jobs/{id}/result".into(),
        ));
    };
    let content_type = body.content_type.unwrap_or_else(|| "application/octet-stream".into());
    let expires_at = chrono::Utc::now() + chrono::Duration::from_std(expires_in).unwrap_or_default();
    // Until the URL expires a PUT may still come: a discarded file is deleted only after (`discarded_files.delete_after`).
    let pending = json!({
        "storage_key": key.as_str(), "file_name": body.file_name, "content_type": content_type, "pending": true,
        "url_expires_at": crate::http::support::pagination::rfc3339(expires_at),
    });
    if !queue.keep_upload(id, lease, &pending).await? {
        return Err(AppError::LeaseLost);
    }
    Ok(HttpResponse::Ok().json(UploadUrl {
        url,
        method: "PUT",
        expires_at: crate::http::support::pagination::rfc3339(expires_at),
    }))
}

/// Before a completion: a file the worker was to PUT through a presigned URL
/// must be there; it is then kept as an uploaded file, with its size.
/// `running` is the attempt as the completion read it under `lease`.
pub(super) async fn confirm_presigned_upload(
    state: &AppState,
    id: JobId,
    lease: LeaseId,
    running: Option<&RunningAttempt>,
) -> Result<(), AppError> {
    let queue = state.store.queue();
    let Some(running) = running else { return Ok(()) };
    let Some(Value::Object(mut pending)) = running.uploaded.clone() else { return Ok(()) };
    if pending.remove("pending").is_none() {
        return Ok(());
    }
    pending.remove("url_expires_at");
    let key = pending.get("storage_key").and_then(Value::as_str).map(|k| ObjectKey::from_stored(k.to_owned()));
    let Some(key) = key else { return Ok(()) };
    let size = state.storage.size(&key).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    let size = size.ok_or_else(|| {
        AppError::BadRequest("the file was not uploaded to the presigned URL: PUT it, then complete".into())
    })?;
    if size > state.settings.max_upload_bytes {
        let _ = state.storage.delete(&key).await;
        return Err(AppError::PayloadTooLarge {
            limit: usize::try_from(state.settings.max_upload_bytes).unwrap_or(usize::MAX),
        });
    }
    let expires_at =
        chrono::Utc::now() + chrono::Duration::from_std(result_retention(state, &running.job_type)).unwrap_or_default();
    pending.insert("size_bytes".into(), json!(size));
    pending.insert("row_count".into(), json!(0));
    pending.insert("expires_at".into(), json!(crate::http::support::pagination::rfc3339(expires_at)));
    if !queue.keep_upload(id, lease, &Value::Object(pending)).await? {
        return Err(AppError::LeaseLost);
    }
    Ok(())
}

/// `body`, ending in an error once it passes `limit` bytes or its deadline,
/// with the refusal the worker should hear left in `refused`.
fn capped(
    body: web::Payload,
    limit: u64,
    refused: std::rc::Rc<std::cell::Cell<Option<AppError>>>,
) -> impl futures_util::Stream<Item = Result<web::Bytes, String>> + Unpin {
    let mut seen = 0u64;
    futures_util::StreamExt::map(body, move |chunk| match chunk {
        Ok(bytes) => {
            seen += bytes.len() as u64;
            if seen > limit {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                refused.set(Some(AppError::PayloadTooLarge { limit }));
                return Err("the upload is over the cap".to_owned());
            }
            Ok(bytes)
        }
        Err(error) => {
            let message = error.to_string();
            refused.set(Some(crate::http::support::body::unreadable(error)));
            Err(message)
        }
    })
}

/// A file name is shown in a download's `Content-Disposition` header and
/// saved on people's disks: no path, and no control character (a header
/// cannot hold one, and a name should not hide one).
fn check_file_name(file_name: &str) -> Result<(), AppError> {
    if file_name.is_empty()
        || file_name.len() > 255
        || file_name.contains(['/', '\\'])
        || file_name.contains(char::is_control)
    {
        return Err(AppError::BadRequest(
            "file_name must be 1 to 255 bytes, without / \\ or control characters".into(),
        ));
    }
    Ok(())
}

/// The object key's extension: the file name's, when it is a short plain one.
fn extension_of(file_name: &str) -> &str {
    file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| e.len() <= 10 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("bin")
}

/// How long a file of a job of `job_type` is kept: its type's result
/// retention (within the storage's).
fn result_retention(state: &AppState, job_type: &str) -> std::time::Duration {
    state.job_types.get(job_type).map_or(state.settings.result_retention, |t| t.result_retention)
}
