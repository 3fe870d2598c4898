//! The JobWorker: one per running job. It runs one attempt of the job's
//! handler under the type's timeout, has the LeaseKeeper renew its lease
//! while it runs, and ends the attempt with one fenced write through the
//! Completer (which, when the job is done, also writes its notification). If
//! the lease is lost, the attempt is cancelled and the worker writes nothing:
//! someone else owns the job now.
//!
//! The handler itself runs on a runtime of its own ([`handler_runtime`]), not
//! on the thread of the actors: between two awaits an export parses and
//! writes megabytes, and on the actors' thread that would hold up every
//! submission, claim and recorded end of the process meanwhile.

use std::sync::{Arc, OnceLock};

use actix::prelude::*;
use tokio::task::AbortHandle;

use crate::actors::completer::{Complete, Recorded};
use crate::actors::running::leases::{LeaseChange, LeaseNotice};
use crate::actors::running::progress::ProgressChange;
use crate::actors::signals::WorkerSlot;
use crate::domain::{Failure, JobId, Outcome, RetryPolicy};
use crate::jobs::{JobContext, JobError, JobOutput, JobType, Progress};
use crate::store::{ClaimedJob, Completion, Ender};

/// The worker of `job` has stopped, however its attempt ended (the
/// Completer told the Notifier of a terminal end); `released` if it had
/// released its slot before ([`WorkerSlot::Released`]).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct WorkerDone {
    pub job: JobId,
    pub released: bool,
}

/// Stop (shutdown; the lease is released after): the handler is told, and
/// has a few seconds to record a checkpoint; no end but a completion is
/// written.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(in crate::actors) struct Abandon;

/// The runtime every handler of the process runs on: as many threads as the
/// machine has cores, apart from the actors' thread, which the operating
/// system then schedules beside them instead of after them.
fn handler_runtime() -> &'static tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("errand-handler")
                .enable_all()
                .build()
                .expect("the handlers' runtime starts (it only needs threads)")
        })
        .handle()
}

/// Where a worker reports: the Completer records its end, the LeaseKeeper
/// renews its lease, the ProgressWriter writes its progress, the dispatcher
/// hears when it releases its slot, its supervisor when it stops.
pub(in crate::actors) struct WorkerLinks {
    pub completer: Recipient<Complete>,
    pub leases: Recipient<LeaseChange>,
    pub progress: Recipient<ProgressChange>,
    pub report_to: Recipient<WorkerDone>,
    pub slots: Recipient<WorkerSlot>,
    /// Where the handler's checkpoints are written.
    pub store: crate::store::Store,
}

pub struct JobWorker {
    job: ClaimedJob,
    job_type: Arc<JobType>,
    links: WorkerLinks,
    /// Cancels the running attempt (lost lease, shutdown).
    abort: Option<AbortHandle>,
    /// The attempt is being recorded: a lost lease no longer matters.
    finishing: bool,
    /// A cancel stopped the handler: its end is `cancelled`.
    cancelling: bool,
    /// What the handler reports of its progress.
    progress: Progress,
    /// What the handler logs.
    logs: crate::jobs::AttemptLog,
    /// Tells the handler the process is stopping (see `Abandon`).
    stopping: tokio::sync::watch::Sender<bool>,
    /// Set once the handler has returned.
    ended: tokio::sync::watch::Sender<bool>,
    /// The attempt's span: its logs' fields, and its trace's consumer span
    /// (open until its end is recorded).
    span: tracing::Span,
}

/// How long a handler told the process is stopping has to record a
/// checkpoint and return, before it is cancelled (an export uploads the
/// part it holds: megabytes).
const CHECKPOINT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl JobWorker {
    pub(in crate::actors) fn new(job: ClaimedJob, job_type: Arc<JobType>, links: WorkerLinks) -> Self {
        Self {
            job,
            job_type,
            links,
            abort: None,
            finishing: false,
            cancelling: false,
            progress: Progress::default(),
            logs: crate::jobs::AttemptLog::default(),
            stopping: tokio::sync::watch::Sender::new(false),
            ended: tokio::sync::watch::Sender::new(false),
            span: tracing::Span::none(),
        }
    }

    /// The attempt's span (OpenTelemetry's messaging conventions): the first
    /// attempt continues the trace of the request that recorded the job, a
    /// later one starts its own, linked to it (`telemetry::traces`).
    fn attempt_span(job: &ClaimedJob) -> tracing::Span {
        let span = tracing::info_span!(
            parent: None,
            "attempt",
            job = %job.id,
            job_type = %job.job_type,
            attempt = job.attempt,
            tenant = %job.tenant,
            otel.name = format!("process {}", job.job_type),
            otel.kind = "consumer",
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty,
            messaging.system = "errand",
            messaging.operation.type = "process",
            messaging.destination.name = %job.job_type,
            messaging.message.id = %job.id,
        );
        crate::telemetry::traces::join_job_trace(&span, job.trace.as_ref(), job.attempt.into());
        span
    }

    fn context(&self) -> JobContext {
        JobContext {
            job_id: self.job.id,
            tenant: self.job.tenant.clone(),
            user: self.job.user.clone(),
            job_type: self.job.job_type.clone(),
            params: self.job.params.clone(),
            attempt: self.job.attempt,
            progress: self.progress.clone(),
            lease: self.job.lease,
            format: self.job.format,
            scheduled_for: self.job.scheduled_for,
            resumed: self.job.checkpoint.clone(),
            checkpoints: crate::jobs::Checkpoints::new(self.links.store.clone(), self.job.id, self.job.lease),
            stopping: self.stopping.subscribe(),
            logs: self.logs.clone(),
            trace: crate::telemetry::traces::parent_of(&self.span)
                .or_else(|| self.job.trace.as_ref()?.parent_for(self.job.attempt.into()).cloned()),
        }
    }

    /// What the attempt's result means for the job.
    fn outcome(&self, result: Result<Result<JobOutput, JobError>, AttemptEnd>) -> Outcome {
        let failed = |failure| self.job_type.retry.outcome(self.job.attempt, failure);
        match result {
            Ok(Ok(output)) if output.result.as_ref().is_some_and(crate::domain::holds_nul) => {
                tracing::error!(job = %self.job.id, "the handler's result holds NUL, which cannot be stored");
                Outcome::Failed { error: "the job finished but its result could not be stored".into() }
            }
            Ok(Ok(output)) => Outcome::Completed { result: output.result },
            Ok(Err(JobError::Permanent(error))) => failed(Failure::Permanent(error)),
            Ok(Err(JobError::Retryable(error))) => failed(Failure::Retryable(error)),
            Err(AttemptEnd::TimedOut) => failed(Failure::Retryable(format!(
                "timed out after {}",
                humantime::format_duration(self.job_type.timeout)
            ))),
            Err(AttemptEnd::Crashed) => failed(Failure::Retryable("the job stopped unexpectedly".into())),
        }
    }

    fn finish(&mut self, outcome: Outcome, ctx: &mut Context<Self>) {
        self.finishing = true;
        if let Outcome::Retry { error, .. } | Outcome::Requeue { error } | Outcome::Failed { error } = &outcome {
            self.span.record("otel.status_code", "error");
            self.span.record("otel.status_description", error.as_str());
        }
        // The outcome is known and only needs writing: the worker lives on,
        // keeping its lease, until it is written, but needs no slot for that.
        self.links.slots.do_send(WorkerSlot::Released);
        let completion = Completion { id: self.job.id, lease: self.job.lease, outcome, ender: Ender::Worker };
        let (completer, tenant, job_type) =
            (self.links.completer.clone(), self.job.tenant.clone(), self.job.job_type.clone());
        // The handler has run: giving up would leave the job to the rescuer,
        // to run again. So the end is kept and tried until the database
        // answers, which also says whether the lease is still ours (the
        // LeaseKeeper renews it meanwhile, as soon as the database is back).
        async move {
            for attempt in 1u32.. {
                let end = Complete { completion: completion.clone(), tenant: tenant.clone(), job_type: job_type.clone() };
                match completer.send(end).await {
                    Ok(Ok(ended)) => return Some(ended),
                    Ok(Err(error)) if attempt <= 3 || attempt.is_power_of_two() => {
                        tracing::warn!(%error, job = %completion.id, attempt, "could not record the attempt; trying again")
                    }
                    Ok(Err(_)) => {}
                    Err(error) => tracing::warn!(%error, job = %completion.id, attempt, "completer unavailable"),
                }
                tokio::time::sleep(RetryPolicy::UNTIL_RECORDED.next_delay(attempt)).await;
            }
            None
        }
        .into_actor(self)
        .map(|recorded, act, ctx| {
            match recorded {
                Some(Recorded::LeaseLost) => {
                    tracing::info!(job = %act.job.id, "attempt ended but the job is no longer ours; nothing written")
                }
                Some(Recorded::Before(state)) => tracing::info!(
                    job = %act.job.id, state = state.as_sql(),
                    "the attempt's end had been recorded, its answer lost; nothing written again"
                ),
                Some(Recorded::Now(_)) | None => {}
            }
            act.ended.send_replace(true);
            ctx.stop();
        })
        .wait(ctx);
    }
}

/// An attempt that ended without the handler returning.
enum AttemptEnd {
    TimedOut,
    Crashed,
}

impl Actor for JobWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // Every line the handler logs carries the job, its type and attempt.
        self.span = Self::attempt_span(&self.job);
        let span = self.span.clone();
        let Some(handler) = self.job_type.handler.clone() else {
            // Claims leave external types to external workers: only a process
            // configured otherwise than the one that recorded the job lands here.
            tracing::error!(job = %self.job.id, "no handler in this process for an external job type");
            let failure = Failure::Retryable("this job type is run by external workers, not by errand".into());
            return self.finish(self.job_type.retry.outcome(self.job.attempt, failure), ctx);
        };
        let (job_type, due_at, context) = (self.job.job_type.clone(), self.job.due_at, self.context());
        let trace_id =
            crate::telemetry::traces::attempt_trace_id(Some(&span), self.job.trace.as_ref(), self.job.attempt.into());
        let run = tracing::Instrument::instrument(
            async move {
                crate::telemetry::record_job_wait(&job_type, due_at, trace_id);
                handler.run(context).await
            },
            span,
        );
        let handle = handler_runtime().spawn(tokio::time::timeout(self.job_type.timeout, run));
        let abort = handle.abort_handle();
        let holder = ctx.address().recipient();
        self.links.leases.do_send(LeaseChange::Hold { job: self.job.id, lease: self.job.lease, holder });
        let (progress, logs) = (self.progress.clone(), self.logs.clone());
        self.links.progress.do_send(ProgressChange::Track { job: self.job.id, lease: self.job.lease, progress, logs });
        async move {
            match handle.await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(_elapsed)) => Err(AttemptEnd::TimedOut),
                Err(join_error) => {
                    if join_error.is_panic() {
                        tracing::error!("job handler panicked");
                    }
                    Err(AttemptEnd::Crashed)
                }
            }
        }
        .into_actor(self)
        .map(|result, act, ctx| {
            if *act.stopping.borrow() && !matches!(result, Ok(Ok(_))) {
                // Given back at shutdown (`Abandon`): only a completion is
                // recorded, anything else runs again elsewhere.
                act.ended.send_replace(true);
                return;
            }
            let outcome = match result {
                // Stopped for a cancel: the handler has really ended now, so
                // nothing it does can follow the recorded end. (Had it
                // finished its work before the stop took, the completion
                // stands: one terminal state either way.)
                Err(AttemptEnd::Crashed) if act.cancelling => Outcome::Cancelled,
                result => act.outcome(result),
            };
            act.finish(outcome, ctx);
        })
        .spawn(ctx);
        self.abort = Some(abort);
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        if let Some(abort) = self.abort.take() {
            abort.abort();
        }
        self.links.leases.do_send(LeaseChange::Release { job: self.job.id });
        self.links.progress.do_send(ProgressChange::Untrack { job: self.job.id });
        self.links.report_to.do_send(WorkerDone { job: self.job.id, released: self.finishing });
    }
}

impl Handler<Abandon> for JobWorker {
    type Result = ResponseActFuture<Self, ()>;

    /// Tells a handler that [stops when asked](crate::jobs::JobHandler::stops_when_asked)
    /// the process is stopping, gives it [`CHECKPOINT_GRACE`] to record a
    /// checkpoint and return (or a completion to be recorded), then cancels
    /// it; any other is cancelled at once. Answered once the attempt has
    /// ended: the caller releases the lease as soon as this is answered.
    fn handle(&mut self, _: Abandon, _ctx: &mut Self::Context) -> Self::Result {
        let asked = self.job_type.handler.as_ref().is_some_and(|h| h.stops_when_asked());
        if asked {
            self.stopping.send_replace(true);
        }
        let mut ended = self.ended.subscribe();
        Box::pin(
            async move {
                // (At once if it has ended already.)
                if asked {
                    let _ = tokio::time::timeout(CHECKPOINT_GRACE, ended.wait_for(|ended| *ended)).await;
                }
            }
            .into_actor(self)
            .map(|(), act, ctx| {
                if let Some(abort) = act.abort.take() {
                    abort.abort();
                }
                ctx.stop();
            }),
        )
    }
}

impl Handler<LeaseNotice> for JobWorker {
    type Result = ();

    fn handle(&mut self, notice: LeaseNotice, ctx: &mut Self::Context) {
        if self.finishing {
            return;
        }
        match notice {
            LeaseNotice::Lost => {
                tracing::warn!(job = %self.job.id, "lease lost; cancelling this attempt");
                ctx.stop();
            }
            LeaseNotice::CancelRequested if !self.cancelling => {
                tracing::info!(job = %self.job.id, "cancel asked for; stopping the handler");
                // Dropping the handler's future stops it at its next await
                // (an export's partial file is removed as it drops); the end
                // is recorded once the handler's task has ended (`started`).
                self.cancelling = true;
                if let Some(abort) = &self.abort {
                    abort.abort();
                }
            }
            LeaseNotice::CancelRequested => {}
        }
    }
}
