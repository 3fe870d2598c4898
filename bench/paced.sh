# Start latency under load: how soon a job starts while errand is busy.
# Sourced by scripts/bench after `base`, `bin`, `SECRET` and its
# start_errand/stop_errand are defined.
#
#   errand_start_latency_under_load <database>
#
# starts a fresh errand on the (empty) database <database>, measures its
# capacity (errand-loadgen's drain: 20,000 noop jobs submitted by 32 clients
# as fast as they are answered, from the first request until every job is
# completed: the rate errand sustains creating and running jobs together),
# then runs a paced producer (errand-loadgen's `paced` phase: open loop, a
# submission on each tick, the 32 clients in turn) at 25, 50, 75 and 90 % of
# it for 20 s each, and prints for each share, from the database once every
# job ran: the time from each job's transaction (its created_at) to the
# claim that started it (started_at; an in-process job's handler starts as
# the claim's reply arrives), as p50, p99 and p99.9, and the producer's own
# view (the POST's answer time).

# The capacity of the errand running at $url: errand-loadgen's drain (see
# above); prints "<jobs/s> <loadgen's line>". Shared with bench/sustained.sh.
errand_capacity() {
  local line
  line=$("$bin/errand-loadgen" --url "$url" --secret "$SECRET" --run-id "capacity-$1-$stamp" --phases drain --drain 20000)
  echo "$(sed -n 's/.* end_to_end=\([0-9]*\) jobs\/s.*/\1/p' <<<"$line") $line"
}

errand_start_latency_under_load() {
  local db=$1 capacity share rate run line
  start_errand "$db"
  read -r capacity line <<<"$(errand_capacity paced)"
  echo "start latency: capacity $capacity jobs/s (20,000 noop jobs created and run, 32 clients): $line"
  for share in 25 50 75 90; do
    rate=$((capacity * share / 100))
    run="paced-$share-$stamp"
    line=$("$bin/errand-loadgen" --url "$url" --secret "$SECRET" --run-id "$run" --phases paced --rate "$rate" --seconds 20)
    until [ "$(psql "$base/$db" -XAtc "SELECT count(*) FROM job_queue")" = 0 ]; do sleep 0.2; done
    psql "$base/$db" -XAtc "SELECT format('start latency load=%s%% rate=%s jobs=%s p50=%sms p99=%sms p99.9=%sms max=%sms',
        $share, $rate, count(*),
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
        round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2),
        round(percentile_cont(0.999) WITHIN GROUP (ORDER BY ms)::numeric, 2), round(max(ms)::numeric, 2))
      FROM (SELECT extract(epoch FROM started_at - created_at) * 1000 AS ms FROM jobs
            WHERE tenant_id LIKE 'bench-$run-%') t"
    # Where the slow starts were: the seconds (from the run's first job) in which a job waited over 100 ms.
    psql "$base/$db" -XAtc "SELECT '  over 100 ms: ' || coalesce(string_agg(format('%ss:%s', s, n), ' ' ORDER BY s), 'none')
      FROM (SELECT s, count(*) AS n
            FROM (SELECT floor(extract(epoch FROM created_at - min(created_at) OVER ()))::int AS s,
                         started_at - created_at > interval '100 ms' AS slow
                  FROM jobs WHERE tenant_id LIKE 'bench-$run-%') t
            WHERE slow GROUP BY s) g"
    echo "  producer: $line"
  done
  stop_errand
}
