//! Stream tickets: a short-lived signed ticket for clients (browsers'
//! EventSource) that cannot send an Authorization header. Each is recorded
//! in the database's ledger (`store/tickets.rs`) when issued and checked off
//! there when it opens a stream, so it opens one stream, once, on any
//! process; and a user may hold only so many unused.

use actix_web::HttpRequest;

use crate::domain::Caller;
use crate::http::AppState;
use crate::http::support::problem::AppError;
use crate::store::TooManyTickets;

/// A new ticket for `caller`, recorded as unused.
pub async fn issue(state: &AppState, caller: &Caller) -> Result<String, AppError> {
    let (ttl, cap) = (state.settings.stream.stream_ticket_ttl, state.settings.stream.max_unused_tickets_per_user.get());
    let id = state.store.tickets_for(caller).issue(ttl, cap).await?.ok_or(TooManyTickets(cap))?;
    state.auth.stream_ticket(caller, ttl, id)
}

/// The caller `ticket` names, if it is valid, unexpired and unused; it is
/// used from here on. Opening a stream spends a request of the caller's
/// rate limits, as a request with a token does.
pub async fn redeem(state: &AppState, request: &HttpRequest, ticket: &str) -> Result<Caller, AppError> {
    let (caller, id) = state.auth.caller_from_ticket(ticket)?;
    crate::http::support::request_id::record_caller(&caller);
    crate::http::auth::spend_a_request(state, &caller, request)?;
    if !state.store.tickets_for(&caller).redeem(id).await? {
        return Err(AppError::Unauthorized("the stream ticket was used already or has expired; ask for a new one"));
    }
    Ok(caller)
}
