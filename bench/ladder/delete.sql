-- Rung `delete` of the ceiling ladder (bench/ladder.sh), a pgbench script:
-- one transaction a batch, one statement: the claim of up to :batch due
-- jobs, oldest first (rows another claim holds are skipped, never waited
-- for), and their end: deleted, with what a worker would be handed
-- returned. The job is gone: no history, and a worker that dies with the
-- batch loses it.
WITH claimed AS (
    SELECT d.id FROM queue d
    WHERE d.run_at <= now()
    ORDER BY d.run_at, d.id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
DELETE FROM queue q
WHERE q.id = ANY (ARRAY (SELECT c.id FROM claimed c))
RETURNING q.id, q.tenant_id, q.user_id, q.job_type, q.params;
