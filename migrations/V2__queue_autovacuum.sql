-- The job table is a queue: every job is inserted, then updated two or three
-- times within seconds. Vacuum and analyze it far more eagerly than the
-- defaults (20% / 10% of the table), so dead row versions from claims do not
-- pile up in the runnable index and the planner learns the table's shape
-- soon after a burst (with no statistics it may pick the owner index over the
-- idempotency index for replays).
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.01,
    autovacuum_vacuum_cost_delay = 0
);
