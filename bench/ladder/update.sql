-- Rung `update` of the ceiling ladder (bench/ladder.sh), a pgbench script:
-- one transaction a batch, one statement: the claim of up to :batch due
-- jobs from the queue, oldest first (rows another claim holds are skipped),
-- and their end as errand's shape has it: the queue rows deleted and the
-- jobs' records, kept as history, updated to `completed`; what a worker
-- would be handed (the record's params) returned.
WITH claimed AS (
    SELECT d.job_id FROM job_queue d
    WHERE d.run_at <= now()
    ORDER BY d.run_at, d.job_id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
), dequeued AS (
    DELETE FROM job_queue q
    WHERE q.job_id = ANY (ARRAY (SELECT c.job_id FROM claimed c))
    RETURNING q.job_id
)
UPDATE jobs j
SET state = 'completed', finished_at = clock_timestamp()
WHERE j.id = ANY (ARRAY (SELECT d.job_id FROM dequeued d))
RETURNING j.id, j.tenant_id, j.user_id, j.job_type, j.params;
