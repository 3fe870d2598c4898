//! An actor's next step, taken once the work already on its way has arrived.

use actix::prelude::*;

/// Runs `step` on the actor once the tasks already woken have run, so that
/// what is on its way now (the other ends of a claim's jobs, the rooms a
/// batch of ends frees) arrives first and shares the step: one statement,
/// one claim. A timer would not do: tokio rounds
/// every deadline up to the end of a millisecond, so a gather of 200 µs
/// waited up to 1.2 ms, and a tenant at its limit waited it on every job's
/// end and again on every room freed (docs/benchmarks-log.md, "What binds a
/// drain at the tenants' limits").
pub fn after_arrivals<A>(ctx: &mut Context<A>, step: impl FnOnce(&mut A, &mut Context<A>) + 'static)
where
    A: Actor<Context = Context<A>>,
{
    ctx.spawn(actix::fut::wrap_future(tokio::task::yield_now()).map(move |(), act, ctx| step(act, ctx)));
}
