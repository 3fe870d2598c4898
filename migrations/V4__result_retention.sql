-- When a job's result file is deleted (its retention ends). Kept beside the
-- result document so the Pruner finds due files through an index.
ALTER TABLE jobs ADD COLUMN result_expires_at timestamptz;
CREATE INDEX jobs_result_expiry ON jobs (result_expires_at) WHERE result_expires_at IS NOT NULL;
