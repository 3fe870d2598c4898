//! `/me/notification-settings`: the caller's time zone (their token's
//! `zoneinfo` claim until they set one), quiet hours, during which their
//! emails and Web Push wait (required categories' do not), and digest time
//! (every hour, or every day at a local time: the categories whose email
//! they read as a digest). Read in the statement that ends each job
//! (`errand_send_at`, `errand_channels`), so a change counts from the next
//! end on.

use actix_web::{HttpResponse, web};
use chrono::NaiveTime;
use serde::{Deserialize, Serialize};

use crate::domain::{Caller, DigestEvery};
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::store::{NotificationSettings, QuietHours, SettingsRefused};

/// Quiet hours as the API writes them: local times `HH:MM`.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuietHoursView {
    /// When quiet begins, e.g. `21:00`.
    start: String,
    /// When it ends, e.g. `08:00` (the next day when earlier than `start`).
    end: String,
}

/// When the digest goes, as the API writes it.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DigestView {
    /// `hour` (at the start of every local hour) or `day`.
    every: String,
    /// For `day`: the local time `HH:MM`, e.g. `08:00`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<String>,
}

/// The caller's settings.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsView {
    /// IANA, e.g. `Europe/Paris`: as set, else the token's `zoneinfo` claim
    /// (absent until either). A `PUT` without one takes the claim's.
    timezone: Option<String>,
    /// Absent: none.
    #[serde(default)]
    quiet_hours: Option<QuietHoursView>,
    /// Absent: no digest (every category's emails go at once).
    #[serde(default)]
    digest: Option<DigestView>,
}

fn hh_mm(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

impl SettingsView {
    /// `settings` as the API shows them to `caller`.
    fn of(settings: Option<NotificationSettings>, caller: &Caller) -> Self {
        let Some(settings) = settings else {
            return Self { timezone: caller.zoneinfo.clone(), quiet_hours: None, digest: None };
        };
        let quiet_hours = settings.quiet_hours.map(|q| QuietHoursView { start: hh_mm(q.start), end: hh_mm(q.end) });
        let digest = settings.digest.map(|digest| match digest {
            DigestEvery::Hour => DigestView { every: "hour".into(), at: None },
            DigestEvery::Day(at) => DigestView { every: "day".into(), at: Some(hh_mm(at)) },
        });
        Self { timezone: Some(settings.timezone), quiet_hours, digest }
    }

    /// The settings this view asks for, checked; the zone defaults to `caller`'s claim.
    fn settings(self, caller: &Caller) -> Result<NotificationSettings, AppError> {
        let invalid = AppError::InvalidPreference;
        let timezone = self.timezone.or_else(|| caller.zoneinfo.clone()).ok_or_else(|| {
            invalid("timezone is required (the token has no zoneinfo claim), e.g. \"Europe/Paris\"".into())
        })?;
        if timezone.parse::<chrono_tz::Tz>().is_err() {
            return Err(invalid(format!("timezone: {timezone:?} is not an IANA time zone, e.g. \"Europe/Paris\"")));
        }
        let time = |field: &str, text: &str| {
            NaiveTime::parse_from_str(text, "%H:%M")
                .map_err(|_| invalid(format!("{field}: {text:?} is not a time HH:MM, e.g. \"21:00\"")))
        };
        let quiet_hours = match self.quiet_hours {
            None => None,
            Some(q) => {
                let quiet =
                    QuietHours { start: time("quiet_hours.start", &q.start)?, end: time("quiet_hours.end", &q.end)? };
                if quiet.start == quiet.end {
                    return Err(invalid("quiet_hours: start and end must differ".into()));
                }
                Some(quiet)
            }
        };
        let digest = match self.digest {
            None => None,
            Some(DigestView { every, at }) => Some(match (every.as_str(), at) {
                ("hour", None) => DigestEvery::Hour,
                ("day", Some(at)) => DigestEvery::Day(time("digest.at", &at)?),
                ("hour", Some(_)) => return Err(invalid("digest.at: an hourly digest goes on the hour".into())),
                ("day", None) => {
                    return Err(invalid("digest.at is required for a daily digest, e.g. \"08:00\"".into()));
                }
                (other, _) => return Err(invalid(format!("digest.every: {other:?} is neither \"hour\" nor \"day\""))),
            }),
        };
        Ok(NotificationSettings { timezone, quiet_hours, digest })
    }
}

/// `GET /me/notification-settings`: the caller's time zone and quiet hours.
#[utoipa::path(get, path = "/me/notification-settings", tag = "notifications",
    responses((status = 200, description = "As set (nulls until set)", body = SettingsView), UserRouteProblems))]
pub async fn get(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let settings = state.store.notification_settings_for(&caller).read().await?;
    Ok(HttpResponse::Ok().json(SettingsView::of(settings, &caller)))
}

/// `PUT /me/notification-settings`: sets the caller's time zone and quiet
/// hours (`quiet_hours` absent or null: none).
#[utoipa::path(put, path = "/me/notification-settings", tag = "notifications",
    request_body(content = SettingsView, description = "`{\"timezone\": \"Europe/Paris\", \"quiet_hours\": {\"start\": \"21:00\", \"end\": \"08:00\"}, \"digest\": {\"every\": \"day\", \"at\": \"08:00\"}}`; without a digest, what a digest held goes at once"),
    responses((status = 200, description = "As now set", body = SettingsView),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "No time zone (and no `zoneinfo` claim) or an unknown one, a time that is not HH:MM, quiet hours that start when they end, or a digest that is not every `hour` or every `day` `at` a time (`invalid_preference`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(caller: Caller, body: web::Payload, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let view: SettingsView = crate::http::support::body::json(body).await?;
    let settings = view.settings(&caller)?;
    match state.store.notification_settings_for(&caller).write(&settings).await {
        Ok(()) => Ok(HttpResponse::Ok().json(SettingsView::of(Some(settings), &caller))),
        Err(SettingsRefused::UnknownZone(zone)) => {
            Err(AppError::InvalidPreference(format!("timezone: {zone:?} is not a time zone the database knows")))
        }
        Err(SettingsRefused::Store(error)) => Err(error.into()),
    }
}
