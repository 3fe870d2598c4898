//! `/me/notification-settings`: the caller's time zone and quiet hours,
//! during which their emails and Web Push wait (required categories' do
//! not). Read in the statement that ends each job (`errand_send_at`),
//! so a change counts from the next end on.

use actix_web::{HttpResponse, web};
use chrono::NaiveTime;
use serde::{Deserialize, Serialize};

use crate::domain::Caller;
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

/// The caller's settings.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsView {
    /// IANA, e.g. `Europe/Paris` (absent until set).
    timezone: Option<String>,
    /// Absent: none.
    #[serde(default)]
    quiet_hours: Option<QuietHoursView>,
}

fn hh_mm(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

impl From<Option<NotificationSettings>> for SettingsView {
    fn from(settings: Option<NotificationSettings>) -> Self {
        let Some(settings) = settings else { return Self { timezone: None, quiet_hours: None } };
        let quiet_hours = settings.quiet_hours.map(|q| QuietHoursView { start: hh_mm(q.start), end: hh_mm(q.end) });
        Self { timezone: Some(settings.timezone), quiet_hours }
    }
}

impl SettingsView {
    /// The settings this view asks for, checked.
    fn settings(self) -> Result<NotificationSettings, AppError> {
        let invalid = AppError::InvalidPreference;
        let timezone = self.timezone.ok_or_else(|| invalid("timezone is required, e.g. \"Europe/Paris\"".into()))?;
        if timezone.parse::<chrono_tz::Tz>().is_err() {
            return Err(invalid(format!("timezone: {timezone:?} is not an IANA time zone, e.g. \"Europe/Paris\"")));
        }
        let time = |field: &str, text: &str| {
            NaiveTime::parse_from_str(text, "%H:%M")
                .map_err(|_| invalid(format!("quiet_hours.{field}: {text:?} is not a time HH:MM, e.g. \"21:00\"")))
        };
        let quiet_hours = match self.quiet_hours {
            None => None,
            Some(q) => {
                let quiet = QuietHours { start: time("start", &q.start)?, end: time("end", &q.end)? };
                if quiet.start == quiet.end {
                    return Err(invalid("quiet_hours: start and end must differ".into()));
                }
                Some(quiet)
            }
        };
        Ok(NotificationSettings { timezone, quiet_hours })
    }
}

/// `GET /me/notification-settings`: the caller's time zone and quiet hours.
#[utoipa::path(get, path = "/me/notification-settings", tag = "notifications",
    responses((status = 200, description = "As set (nulls until set)", body = SettingsView), UserRouteProblems))]
pub async fn get(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let settings = state.store.notification_settings_for(&caller).read().await?;
    Ok(HttpResponse::Ok().json(SettingsView::from(settings)))
}

/// `PUT /me/notification-settings`: sets the caller's time zone and quiet
/// hours (`quiet_hours` absent or null: none).
#[utoipa::path(put, path = "/me/notification-settings", tag = "notifications",
    request_body(content = SettingsView, description = "`{\"timezone\": \"Europe/Paris\", \"quiet_hours\": {\"start\": \"21:00\", \"end\": \"08:00\"}}`"),
    responses((status = 200, description = "As now set", body = SettingsView),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "No or an unknown time zone, a time that is not HH:MM, or quiet hours that start when they end (`invalid_preference`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(caller: Caller, body: web::Payload, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let view: SettingsView = crate::http::support::body::json(body).await?;
    let settings = view.settings()?;
    match state.store.notification_settings_for(&caller).write(&settings).await {
        Ok(()) => Ok(HttpResponse::Ok().json(SettingsView::from(Some(settings)))),
        Err(SettingsRefused::UnknownZone(zone)) => {
            Err(AppError::InvalidPreference(format!("timezone: {zone:?} is not a time zone the database knows")))
        }
        Err(SettingsRefused::Store(error)) => Err(error.into()),
    }
}
