//! How the Mailer and the PushSender go through their outboxes: one round
//! (a claim, its sends, their records) at a time; a wake-up during a round
//! starts another once it ends, as does a round that took a full batch
//! (more may be due).

/// The rounds of one outbox's sender.
#[derive(Debug, Default)]
pub struct Rounds {
    sending: bool,
    /// Woken while sending: look again afterwards.
    again: bool,
}

impl Rounds {
    /// Whether a round may start now; if one is under way, it looks again once it ends.
    pub fn start(&mut self) -> bool {
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
        self.again || taken == batch
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
}
