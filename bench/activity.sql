-- How busy a database's client backends are, sampled every half millisecond
-- for a few seconds from one extra session: the share of samples with 0, 1,
-- 2, ... statements active, and what the active ones were doing (CPU or a
-- wait event) in which statement. Tells a pipeline bound by its own gaps
-- (few statements active) from one bound by the database (always busy).
--   psql <server>/postgres -X -v db=<database> -v secs=3 -f bench/activity.sql
-- Start it just before the load; the sampler itself takes a little of a core.
SET sample.secs = :'secs';
SET sample.db = :'db';
CREATE TEMP TABLE s (n int, active int, waits text[]);
DO $$
DECLARE
  stop timestamptz := clock_timestamp() + (current_setting('sample.secs') || ' s')::interval;
  i int := 0; a int; w text[];
BEGIN
  WHILE clock_timestamp() < stop LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT count(*) FILTER (WHERE state = 'active'),
           array_agg(coalesce(wait_event_type || ':' || wait_event, 'CPU') || ':' || left(regexp_replace(query, '\s+', ' ', 'g'), 40)) FILTER (WHERE state = 'active')
      INTO a, w
      FROM pg_stat_activity WHERE datname = current_setting('sample.db') AND pid <> pg_backend_pid() AND backend_type = 'client backend';
    INSERT INTO s VALUES (i, a, w);
    i := i + 1;
    PERFORM pg_sleep(0.0005);
  END LOOP;
END $$;
SELECT active, count(*), round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct FROM s GROUP BY 1 ORDER BY 1;
SELECT split_part(x, ':', 1) || ':' || split_part(x, ':', 2) AS wait, left(split_part(x, ':', 3), 40) q, count(*) FROM s, unnest(waits) x GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 15;
