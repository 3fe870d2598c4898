-- External workers: fences that outlive an attempt, and uploads.
--
-- Job types may be run outside errand (`handler = "external"`): workers in
-- any language claim them over HTTP (`POST /worker/v1/claim`, through V7's
-- `errand_claim` with the types they take).
--
-- An external worker's `/complete` or `/fail` may be retried after a network
-- error, after errand recorded the first: the lease it names is kept where
-- the attempt ended (`job_queue.last_lease_id` for an attempt that will run
-- again, `jobs.ended_lease_id` for the job's end), so the retry is answered
-- as the first was instead of as a lost lease.
ALTER TABLE job_queue ADD COLUMN last_lease_id uuid;
ALTER TABLE jobs ADD COLUMN ended_lease_id uuid;

-- A file an external worker uploaded for the running attempt
-- (`PUT /worker/v1/jobs/{id}/result`), fenced on its lease: it becomes the
-- job's result when that attempt completes.
ALTER TABLE job_queue ADD COLUMN uploaded_result jsonb;
