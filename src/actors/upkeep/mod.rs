//! What keeps the engine going beside the jobs themselves: the Listener
//! (NOTIFY wake-ups), the Rescuer (expired leases), the Pruner (what finished
//! jobs leave), the Scheduler (due schedules), the SightingsWriter (who
//! signed in), the TotalsPublisher and the QueueVacuum (the queue's dead
//! rows).

pub mod listener;
pub mod pruner;
pub mod rescuer;
pub mod scheduler;
pub mod sightings;
pub mod totals;
pub mod vacuum;
