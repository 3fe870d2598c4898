-- Claims and attempt ends per second, cluster-wide, for the operators'
-- overview (issue 22). Each errand process counts its own in memory and
-- writes its running totals here every few seconds: one small upsert per
-- process, not a write per job. The overview sums the rows; a page samples
-- the sums and shows their rates. A process that stopped leaves its last
-- totals (its rate is then zero) until a day has passed.
CREATE TABLE process_totals (
    -- The process's `application_name` (`errand/<uuid>`).
    process        text PRIMARY KEY,
    claimed        bigint NOT NULL,
    attempts_ended bigint NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
