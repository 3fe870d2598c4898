-- Jobs can be cancelled (by their owner or an operator). A value added to an
-- enum cannot be used in the transaction that adds it: V9 uses it.
ALTER TYPE job_state ADD VALUE IF NOT EXISTS 'cancelled';
