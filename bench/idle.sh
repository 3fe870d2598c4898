# Idle latency: how soon a job submitted to a quiet errand starts. Sourced by
# scripts/bench after `base`, `bin`, `SECRET` and its start_errand/stop_errand
# are defined.
#
#   errand_idle_latency <database>
#
# starts a fresh errand on the (empty) database <database>, sends 300 noop
# submissions one at a time, 20 ms apart, and prints two figures, both server
# side and both starting at the job's transaction (its created_at):
#   idle claim  ...  to the claim that leased it (its started_at, in the database);
#   idle start  ...  to its handler's start (errand_job_wait_seconds from
#                    /metrics: the process ran nothing else, so its histogram
#                    is these jobs'; quantiles interpolated within buckets
#                    whose bounds include the aims, 1.5 and 5 ms, so the
#                    shares under them are exact).
# Then the floor under them: one client's INSERT of a job and its commit, at
# the same pace (pgbench -R 50; at full speed the same statement takes half
# as long: the machine idles between requests, as errand does here).

errand_idle_latency() {
  local db=$1 token i
  start_errand "$db"
  token=$(ERRAND_AUTH__JWT_SECRET=$SECRET "$bin/errand" token --tenant idle-latency --user bench --ttl 1h)
  for ((i = 0; i < 300; i++)); do
    curl -s -o /dev/null -X POST "$url/jobs/noop" -H "Authorization: Bearer $token" -H "Idempotency-Key: idle-$i" -d '{}'
    sleep 0.02
  done
  # A job's started_at is recorded with its end: wait until every one has ended.
  until [ "$(psql "$base/$db" -XAtc "SELECT count(*) FROM job_queue")" = 0 ]; do
    sleep 0.1
  done
  psql "$base/$db" -XAtc "SELECT format('idle claim jobs=%s p50=%sms p99=%sms max=%sms', count(*),
      round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
      round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2), round(max(ms)::numeric, 2))
    FROM (SELECT extract(epoch FROM started_at - created_at) * 1000 AS ms FROM jobs) t"
  curl -s "$url/metrics" | awk '
    /^errand_job_wait_seconds_bucket\{job_type="noop",le="[0-9.e+-]+"\}/ {
      match($0, /le="[^"]*"/); le[k] = substr($0, RSTART + 4, RLENGTH - 5) + 0; cum[k++] = $2 }
    /^errand_job_wait_seconds_count\{job_type="noop"\}/ { n = $2 }
    function quantile(q,   i, target, low, below) {
      target = q * n; low = 0; below = 0
      for (i = 0; i < k; i++) {
        if (cum[i] >= target) return (low + (le[i] - low) * (target - below) / (cum[i] - below)) * 1000
        low = le[i]; below = cum[i]
      }
      return -1
    }
    function share(bound,   i) { for (i = 0; i < k; i++) if (le[i] == bound) return 100 * cum[i] / n; return -1 }
    END { printf "idle start jobs=%d p50=%.2fms p99=%.2fms under_1.5ms=%.1f%% under_5ms=%.1f%%\n",
                 n, quantile(0.5), quantile(0.99), share(0.0015), share(0.005) }'
  stop_errand
  pgbench -n -M prepared -c 1 -j 1 -T 6 -R 50 -f bench/pgbench_insert.sql "$base/$db" 2>/dev/null |
    awk '/^latency average/ { print "idle floor (INSERT and commit, 50/s): " $4 " ms" }'
}
