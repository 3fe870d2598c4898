//! How the Mailer and the PushSender go through their outboxes: one round
//! (a claim, its sends, their records) at a time; a wake-up during a round
//! starts another once it ends, as does a round that took a full batch
//! (more may be due). A stopping process finishes the round under way and
//! starts none ([`FinishSending`]).

use std::future::Future;

use actix::Message;
use tokio::sync::oneshot;

/// The process is stopping: finish the round under way, start no other, and
/// answer once none runs. What a round claimed is then sent and recorded at
/// once, not left locked until its lock runs out (a minute and more of delay
/// for each process a rolling upgrade restarts); what is still pending goes
/// to the other processes.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct FinishSending;

/// The rounds of one outbox's sender.
#[derive(Debug, Default)]
pub struct Rounds {
    sending: bool,
    /// Woken while sending: look again afterwards.
    again: bool,
    /// Stopping: no round starts.
    closing: bool,
    /// Told when the round under way ends.
    finished: Vec<oneshot::Sender<()>>,
}

impl Rounds {
    /// Whether a round may start now; if one is under way, it looks again once it ends.
    pub fn start(&mut self) -> bool {
        if self.closing {
            return false;
        }
        if self.sending {
            self.again = true;
            return false;
        }
        (self.sending, self.again) = (true, false);
        true
    }

    /// The round that took `taken` of at most `batch` ended: whether to start another at once.
    pub fn end(&mut self, taken: usize, batch: usize) -> bool {
        self.sending = false;
        for waiter in self.finished.drain(..) {
            let _ = waiter.send(());
        }
        !self.closing && (self.again || taken == batch)
    }

    /// Starts no more rounds; resolves once the one under way (if any) ended.
    pub fn finish(&mut self) -> impl Future<Output = ()> + 'static {
        self.closing = true;
        let under_way = self.sending.then(|| {
            let (told, ended) = oneshot::channel();
            self.finished.push(told);
            ended
        });
        async move {
            if let Some(ended) = under_way {
                // A dropped sender (the actor stopped) ends the wait as well.
                let _ = ended.await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_during_a_round_or_a_full_batch_starts_another_and_nothing_else_does() {
        let mut rounds = Rounds::default();
        assert!(rounds.start());
        assert!(!rounds.start(), "one round at a time");
        assert!(rounds.end(3, 20), "woken meanwhile");
        assert!(rounds.start());
        assert!(!rounds.end(3, 20), "a quiet round that found less than a batch");
        assert!(rounds.start());
        assert!(rounds.end(20, 20), "a full batch: more may be due");
    }

    #[actix_web::test]
    async fn finishing_waits_for_the_round_under_way_and_then_nothing_starts() {
        use futures_util::FutureExt;
        let mut rounds = Rounds::default();
        assert!(rounds.start());
        let mut finished = Box::pin(rounds.finish());
        assert!((&mut finished).now_or_never().is_none(), "a round is under way");
        assert!(!rounds.end(20, 20), "no round after it, full batch or not");
        finished.await;
        assert!(!rounds.start());
        let idle = Rounds::default().finish();
        assert!(idle.now_or_never().is_some(), "nothing under way: at once");
    }
}
