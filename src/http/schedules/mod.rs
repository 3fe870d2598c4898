//! `/schedules`: a user's own recurring jobs ("every Monday at 08:00,
//! Europe/Paris"), of the types configured `schedulable`. Created under an
//! idempotency key as jobs are; every read and change goes through the
//! caller's scope. When a schedule fires is `domain::schedule`'s to say;
//! the Scheduler fires it.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

use crate::domain::{Caller, Fingerprint, Missed, Occasion, Occurrence, Recurrence, ScheduleId, resolve_dates};
use crate::http::support::problem::{AppError, Problem, Unauthenticated, Unavailable, UserRouteProblems};
use crate::http::support::{body, pagination};
use crate::http::{AppState, path_id};
use crate::jobs::{JobType, ParamsError};
use crate::store::{NewSchedule, Schedule, ScheduleCreation};

pub mod managed;
mod wire;

use crate::http::support::routing::Routes;
use wire::{ListQuery, MissedName, NewScheduleRequest, ScheduleChange, ScheduleList, ScheduleView};

/// Occurrences looked at for the shortest interval of an expression.
const INTERVAL_SAMPLE: usize = 200;

fn invalid(field: &'static str, reason: impl Into<String>) -> AppError {
    AppError::InvalidSchedule { field, reason: reason.into() }
}

fn missed_policy(name: MissedName, limit: Option<u32>) -> Result<Missed, AppError> {
    match (name, limit) {
        (_, Some(limit)) if !(1..=100).contains(&limit) => {
            Err(invalid("catch_up_limit", format!("must be 1 to 100, not {limit}")))
        }
        (MissedName::Skip, _) => Ok(Missed::Skip),
        (MissedName::CatchUp, limit) => Ok(Missed::CatchUp { limit: limit.unwrap_or(1) }),
    }
}

/// The schedulable type `name`, or why not.
fn schedulable<'a>(state: &'a AppState, name: &str) -> Result<(&'a JobType, std::time::Duration), AppError> {
    let job_type = state.job_types.get(name).ok_or_else(|| AppError::UnknownJobType(name.to_owned()))?;
    let every = job_type.schedulable_every.ok_or_else(|| AppError::NotSchedulable(name.to_owned()))?;
    Ok((job_type, every))
}

/// Params checked against the type's schema as the job of `occasion` would
/// get them (date expressions resolved), their field named under `/params`.
fn checked_params(job_type: &JobType, params: &Value, occasion: Occasion) -> Result<(), AppError> {
    if !params.is_object() {
        return Err(invalid("params", "must be a JSON object (the jobs' params)"));
    }
    let under_params = |field: &str| format!("/params{}", field.trim_end_matches('/'));
    let resolved = resolve_dates(params, occasion)
        .map_err(|e| AppError::InvalidParams(ParamsError { field: under_params(&e.field), reason: e.reason }))?;
    job_type.validate_params(&resolved).map_err(|mut e| {
        e.field = under_params(&e.field);
        AppError::InvalidParams(e)
    })
}

/// The occasion of `next` (now, when there is none) on the schedule's wall clock.
fn occasion(recurrence: &Recurrence, next: Option<Occurrence>) -> Occasion {
    let zone = recurrence.zone();
    Occasion { local: next.map_or_else(|| Utc::now().with_timezone(&zone).naive_local(), |o| o.local), zone }
}

/// The expression in its zone, no more frequent than the type allows.
fn recurrence(cron: &str, timezone: &str, every: std::time::Duration) -> Result<Recurrence, AppError> {
    let recurrence = Recurrence::parse(cron, timezone).map_err(|e| invalid(e.field, e.reason))?;
    let shortest = recurrence.shortest_interval(Utc::now(), INTERVAL_SAMPLE);
    let allowed = TimeDelta::from_std(every).unwrap_or(TimeDelta::MAX);
    match shortest {
        None => Err(invalid("cron", format!("{cron:?} never fires"))),
        Some(gap) if gap < allowed => Err(invalid(
            "cron",
            format!(
                "{cron:?} fires every {} at times; this job type may be scheduled at most every {}",
                humantime::format_duration(gap.to_std().unwrap_or_default()),
                humantime::format_duration(every)
            ),
        )),
        Some(_) => Ok(recurrence),
    }
}

/// The first occurrence after now, unless past `ends_at`.
fn first(recurrence: &Recurrence, ends_at: Option<DateTime<Utc>>) -> Option<Occurrence> {
    recurrence.first_after(Utc::now()).filter(|o| ends_at.is_none_or(|end| o.at <= end))
}

/// `POST /schedules/{type}`: record a schedule (or find the one the key names).
#[utoipa::path(post, path = "/schedules/{job_type}", tag = "schedules",
    params(("job_type" = String, Path, description = "A job type configured `schedulable`"),
        ("Idempotency-Key" = String, Header, pattern = "^[!-~]{1,255}$", description = "One per intent, as for jobs")),
    request_body = NewScheduleRequest,
    responses((status = 201, description = "A new schedule, with its `next_run_at`", body = ScheduleView),
        (status = 200, description = "The key's schedule, replayed (`Idempotent-Replayed: true`)", body = ScheduleView),
        (status = 400, description = "Missing or malformed key, or a malformed body (`bad_request`, `invalid_idempotency_key`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 404, description = "Unknown job type (`unknown_job_type`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A type that cannot be scheduled (`job_type_not_schedulable`); a bad `cron`, `timezone`, `ends_at` or `catch_up_limit`, or one firing more often than the type allows (`invalid_schedule`, with `field`); params refused (`invalid_params`, `field` e.g. `/params/to`); the key reused for another request (`idempotency_key_reused`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "As many schedules as one user may have (`quota_exceeded`, `scope` `user_schedules`), or past a rate limit (`rate_limited`)", body = Problem, content_type = "application/problem+json"),
        Unavailable))]
pub async fn create(
    req: HttpRequest,
    caller: Caller,
    path: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let key = super::jobs::idempotency_key(&req)?;
    let (job_type, every) = schedulable(&state, &path)?;
    let whole: Value = body::json(payload).await?;
    let request: NewScheduleRequest =
        serde_json::from_value(whole.clone()).map_err(|e| AppError::BadRequest(format!("the body: {e}")))?;
    let recurrence = recurrence(&request.cron, &request.timezone, every)?;
    if request.ends_at.is_some_and(|end| end <= Utc::now()) {
        return Err(invalid("ends_at", "is in the past"));
    }
    let first = first(&recurrence, request.ends_at);
    checked_params(job_type, &request.params, occasion(&recurrence, first))?;
    let format = job_type.format_for(request.format.as_deref())?;
    let missed = missed_policy(request.missed, request.catch_up_limit)?;
    let new = NewSchedule {
        key,
        fingerprint: Fingerprint::of_schedule(&job_type.name, &whole),
        job_type: job_type.name.clone(),
        params: request.params,
        format,
        cron: request.cron,
        timezone: request.timezone.trim().to_owned(),
        ends_at: request.ends_at,
        missed,
        overlap: request.overlap,
        first,
        trace: crate::http::support::request_id::trace_of(&req, &tracing::Span::current()),
    };
    match state.store.schedules_for(&caller).create(&new, state.settings.max_schedules_per_user).await? {
        ScheduleCreation::Created(s) => Ok(HttpResponse::Created()
            .insert_header((header::LOCATION, format!("/schedules/{}", s.id)))
            .json(ScheduleView::of(s))),
        ScheduleCreation::Replayed(s) => Ok(HttpResponse::Ok()
            .insert_header(("Idempotent-Replayed", "true"))
            .insert_header((header::LOCATION, format!("/schedules/{}", s.id)))
            .json(ScheduleView::of(s))),
        ScheduleCreation::KeyReused => Err(AppError::IdempotencyKeyReused),
        ScheduleCreation::OverQuota { limit, count } => Err(AppError::TooManySchedules { limit, count }),
    }
}

/// `GET /schedules`: the caller's schedules, newest first.
#[utoipa::path(get, path = "/schedules", tag = "schedules",
    params(("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of the caller's schedules", body = ScheduleList),
        (status = 400, description = "A bad limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(
    caller: Caller,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let limit = pagination::limit(query.limit)?;
    let before = query.cursor.as_deref().map(pagination::decode_cursor).transpose()?.map(ScheduleId);
    let (schedules, next_before) = state.store.schedules_for(&caller).list(before, limit).await?;
    let next_cursor = next_before.map(|id| pagination::encode_cursor(id.0));
    Ok(HttpResponse::Ok()
        .json(ScheduleList { schedules: schedules.into_iter().map(ScheduleView::of).collect(), next_cursor }))
}

/// `GET /schedules/{id}`: the caller's schedule, or 404.
#[utoipa::path(get, path = "/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 200, description = "The caller's schedule", body = ScheduleView),
        UserRouteProblems,
        (status = 404, description = "No such schedule of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn get(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = ScheduleId(super::read_by_id(&path, &state)?);
    let schedule = state.store.schedules_for(&caller).get(id).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(ScheduleView::of(schedule)))
}

/// `PATCH /schedules/{id}`: pause (`{"paused": true}`), resume, or change
/// params, format, expression, zone, end or policies. A changed expression,
/// zone or end counts from now; a resumed schedule's occurrences that fell
/// while it was paused are skipped (its next run is its next occurrence
/// after now), whatever its `missed` policy.
#[utoipa::path(patch, path = "/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    request_body = ScheduleChange,
    responses((status = 200, description = "The schedule, changed", body = ScheduleView),
        (status = 400, description = "A malformed body (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems,
        (status = 404, description = "No such schedule of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "As for `POST` (`invalid_schedule`, `invalid_params`, with `field`)", body = Problem, content_type = "application/problem+json")))]
pub async fn change(
    caller: Caller,
    path: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = ScheduleId(path_id(&path)?);
    let change: ScheduleChange = body::json(payload).await?;
    let changed = state.store.schedules_for(&caller).change(id, |s| apply(s, change, &state)).await?;
    let schedule = changed.ok_or(AppError::NotFound)??;
    Ok(HttpResponse::Ok().json(ScheduleView::of(schedule)))
}

/// `change` applied to `s`, checked as a new schedule is.
fn apply(mut s: Schedule, change: ScheduleChange, state: &AppState) -> Result<Schedule, AppError> {
    // What it makes or when: checked against its type as a new schedule is.
    // Pausing, resuming and the policies are not: a type no longer
    // schedulable leaves its schedules able to be paused.
    let when_changed = change.cron.is_some() || change.timezone.is_some() || change.ends_at.is_some();
    let resumed = s.paused.is_some() && change.paused == Some(false);
    if change.params.is_some() || change.format.is_some() || when_changed {
        let (job_type, every) = schedulable(state, &s.job_type)?;
        s.cron = change.cron.unwrap_or(s.cron);
        s.timezone = change.timezone.map_or(s.timezone, |tz| tz.trim().to_owned());
        if let Some(ends_at) = change.ends_at {
            if ends_at.is_some_and(|end| end <= Utc::now()) {
                return Err(invalid("ends_at", "is in the past"));
            }
            s.ends_at = ends_at;
        }
        let recurrence = recurrence(&s.cron, &s.timezone, every)?;
        if when_changed {
            s.next = first(&recurrence, s.ends_at);
        }
        // The params are checked again when the zone or the expression
        // changes too: their dates move with them.
        s.params = change.params.unwrap_or(s.params);
        checked_params(job_type, &s.params, occasion(&recurrence, s.next))?;
        if let Some(format) = change.format {
            s.format = job_type.format_for(Some(&format))?;
        }
    }
    if change.missed.is_some() || change.catch_up_limit.is_some() {
        let (name, limit) = match s.missed {
            Missed::Skip => (MissedName::Skip, None),
            Missed::CatchUp { limit } => (MissedName::CatchUp, Some(limit)),
        };
        s.missed = missed_policy(change.missed.unwrap_or(name), change.catch_up_limit.or(limit))?;
    }
    s.overlap = change.overlap.unwrap_or(s.overlap);
    if let Some(paused) = change.paused {
        s.set_paused(paused);
    }
    if resumed && !when_changed {
        // What fell due while it was paused is skipped, whatever its
        // `missed` policy says: its owner paused it not to have those jobs.
        // (`missed` is for occurrences errand itself missed.)
        if let Ok(recurrence) = Recurrence::parse(&s.cron, &s.timezone) {
            s.next = first(&recurrence, s.ends_at);
        }
    }
    Ok(s)
}

/// `DELETE /schedules/{id}`: the caller's schedule is gone (its jobs stay).
#[utoipa::path(delete, path = "/schedules/{id}", tag = "schedules",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 204, description = "Deleted"),
        UserRouteProblems,
        (status = 404, description = "No such schedule of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn delete(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = ScheduleId(path_id(&path)?);
    if state.store.schedules_for(&caller).delete(id).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(AppError::NotFound)
    }
}

/// `/schedules` (`/schedules/{type}` makes one, `/schedules/{id}` reads,
/// changes or deletes one), and the pause link's page.
pub fn routes(r: &mut Routes) {
    use crate::http::links::schedule_pause;
    r.get("/schedules", list)
        // Before `/schedules/{id_or_type}`; two segments, so it never takes a schedule's path.
        .resource("/schedules/pause/{token}", "GET, HEAD, POST", |res| {
            res.route(web::get().to(schedule_pause::ask))
                .route(web::head().to(schedule_pause::ask))
                .route(web::post().to(schedule_pause::confirm))
        })
        .id_or_type("/schedules", "GET, PATCH, DELETE", "POST", |res| {
            res.route(web::get().to(get))
                .route(web::patch().to(change))
                .route(web::delete().to(delete))
                .route(web::post().to(create))
        })
        .get("/admin/schedules", managed::list_for_operator)
        .post("/admin/schedules/{id}/pause", managed::pause_for_operator)
        .resource("/admin/schedules/{id}", "DELETE", |res| res.route(web::delete().to(managed::delete_for_operator)))
        .get("/tenant/schedules", managed::list_for_tenant_admin)
        .post("/tenant/schedules/{id}/pause", managed::pause_for_tenant_admin)
        .resource("/tenant/schedules/{id}", "DELETE", |res| {
            res.route(web::delete().to(managed::delete_for_tenant_admin))
        });
}
