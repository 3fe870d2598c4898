//! The Gate: a handler holding its jobs running until the test lets them
//! go, and signalling each start, so that tests wait on it instead of polling.

use super::*;

/// errand with the builtin job types and `held`, whose jobs the returned
/// [`Gate`] holds running until the test releases them.
pub async fn spawn_app_with_gate(configure: impl FnOnce(&mut Settings)) -> (TestApp, Gate) {
    let gate = Gate::new();
    (TestApp::builder().job_type("held", gate.clone()).configure(configure).spawn().await, gate)
}

/// A handler that holds every job it runs "running" until the test lets it
/// go, and signals each start: tests wait on it instead of polling.
#[derive(Clone)]
pub struct Gate {
    open: Arc<tokio::sync::Semaphore>,
    started: Arc<tokio::sync::Semaphore>,
}

impl Gate {
    pub fn new() -> Self {
        Self { open: Arc::new(tokio::sync::Semaphore::new(0)), started: Arc::new(tokio::sync::Semaphore::new(0)) }
    }

    /// Waits until `n` more attempts have started.
    pub async fn started(&self, n: u32, within: Duration) {
        let started = tokio::time::timeout(within, self.started.acquire_many(n)).await;
        started.expect("attempts started in time").expect("gate open").forget();
    }

    /// Lets `n` held attempts complete.
    pub fn release(&self, n: usize) {
        self.open.add_permits(n);
    }

    /// Signals an attempt's start (for handlers that hold attempts their own way).
    pub fn mark_started(&self) {
        self.started.add_permits(1);
    }
}

impl errand::jobs::JobHandler for Gate {
    fn run(&self, _ctx: errand::jobs::JobContext) -> errand::jobs::HandlerFuture {
        let gate = self.clone();
        Box::pin(async move {
            gate.mark_started();
            gate.open.acquire().await.expect("gate open").forget();
            Ok(errand::jobs::JobOutput::default())
        })
    }
}
