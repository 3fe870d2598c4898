-- Failed and cancelled jobs, by id (issue 22): the operators' overview counts
-- them (capped) and a bulk retry walks the failed ones. They are few among
-- the finished, so without an index each of those read the whole history;
-- a job is written here only when it fails or is cancelled.
CREATE INDEX jobs_failed_or_cancelled ON jobs (state, id) WHERE state IN ('failed', 'cancelled');
