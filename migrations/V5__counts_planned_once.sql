-- The counts' trigger and its moves planned once per connection.
--
-- `errand_count_changed` (V3) runs for every statement that queues or ends
-- jobs. PostgreSQL's plan cache gave its statement a custom plan each time
-- it ended jobs: measured with pg_stat_statements' planning times in a
-- drain of 40,000 jobs (`bench/profile.sh`), 0.074 ms of planning a call
-- (about 2.5 µs a job) against 0.006 ms once forced generic; its
-- execution was no slower (0.385 against 0.412 ms a call). Creation's calls
-- were generic already. `errand_count_rest` (a key's move to a new second,
-- at most once a second a key) was planned afresh at every call: about
-- 0.5-0.9 ms, its statements' whole cost.
--
-- A generic plan is safe here: both functions already turn off hash and
-- merge joins and sequential scans, so every plan is the same walk of the
-- counts' primary key whatever the transition table's size; what the
-- custom plans bought was only their planning. (Measured through errand,
-- the drain: generic against custom 1.03, the median of 8 alternating
-- pairs, 0.90-1.21: within this machine's noise. docs/benchmarks-log.md,
-- "What binds the drain".)
ALTER FUNCTION errand_count_changed() SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION errand_count_rest(text[], text[], text[], bigint[], bigint[], bigint, boolean, jsonb)
    SET plan_cache_mode = force_generic_plan;
