# Drain benchmarks: a backlog inserted before any worker starts (how job
# runners are usually compared), drained by one or more errand processes.
# Meant to be sourced by scripts/bench after `base`, `bin` and `SECRET` are set.
#
#   errand_drain <database> <jobs> <tenants> <processes> [label]
#
# migrates a fresh database, inserts <jobs> jobs (no-op ones, or of the type
# ERRAND_DRAIN_TYPE with params ERRAND_DRAIN_PARAMS) spread round-robin over
# <tenants> tenants (one statement, then ANALYZE), starts <processes> errand
# processes on it (settings from the environment, e.g. ERRAND_WORKERS__TENANT_LIMIT),
# waits until the queue is empty and prints
#   errand <label> jobs=<N> tenants=<T> processes=<P> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> claim_to_end_ms=<H> cpu_us_per_job=<U> peak_rss_mb=<M>
# timed twice on the database's clock (so the 200 ms wait between checks adds
# nothing), and with the machine's CPU time over the drain (every process's:
# errand's and PostgreSQL's alike, and the checks' psql) per job:
#   seconds: from just before the processes start to the last job's
#     finished_at (the end statement's clock, as it records the end);
#   busy_seconds: from the first job's started_at (its claim's clock, just
#     before its handler starts) to the last job's finished_at: errand's jobs
#     carry no handler stamps, so this span includes the first claim's and
#     the last end's writes, which graphile-worker's busy_seconds (its
#     handlers' own stamps) leaves out.

# The machine's CPU time so far, in seconds: user, nice, system, irq and
# softirq of /proc/stat's first line (idle, iowait and steal are not work
# done here). bench/graphile/drain.mjs counts its drain's the same way.
errand_cpu_seconds() {
  awk '/^cpu / { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8) / 100; exit }' /proc/stat
}

# The machine's CPU time since <cpu-seconds> (errand_cpu_seconds then), in
# microseconds per job of <jobs>.
errand_cpu_us_per_job() {
  awk -v a="$1" -v b="$(errand_cpu_seconds)" -v n="$2" 'BEGIN { printf "%.0f", (b - a) / n * 1e6 }'
}

# The highest peak resident memory (VmHWM) of <pids...>, in MB.
errand_peak_rss_mb() {
  local pid
  for pid in "$@"; do awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status"; done | sort -n | tail -1 | awk '{ printf "%.1f", $1 / 1024 }'
}

# The errand processes of the drain under way (for errand_stop_drain).
ERRAND_DRAIN_PIDS=()

# Stops the drain's processes, if any (also when a run stops half-way).
errand_stop_drain() {
  local pid
  for pid in "${ERRAND_DRAIN_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${ERRAND_DRAIN_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ERRAND_DRAIN_PIDS=()
}

# Makes database <db>, migrated, holding <jobs> jobs of <type> (params
# <params>) round-robin over <tenants> tenants, queued and analyzed; prints
# its URL. Shared with bench/workers.sh.
errand_drain_backlog() {
  # sslmode=disable: a local server, measured as the peers reach it (and psql reads it too).
  local db=$1 jobs=$2 tenants=$3 job_type=$4 params=$5 url="$base/$1?sslmode=disable"
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  RUST_LOG=warn ERRAND_DATABASE__URL=$url "$bin/errand" migrate >/dev/null
  errand_drain_insert "$url" "$jobs" "$tenants" "$job_type" "$params"
  printf '%s\n' "$url"
}

# Inserts the backlog into the migrated, empty database <url>: <jobs> jobs of
# <type> (params <params>) round-robin over <tenants> tenants, queued, then
# vacuumed and analyzed. Shared with bench/ceiling.sh.
errand_drain_insert() {
  local url=$1 jobs=$2 tenants=$3 job_type=$4 params=$5 owner=", user_id" turn=", turn" turns
  # Each tenant's backlog is one user's: its turns are 0, 1, 2, ... (see errand_turn).
  turns=", row_number() OVER (PARTITION BY tenant_id ORDER BY id) - 1"
  # A schema from before the queue knew its jobs' users or their turns (bench/ab.sh against an older errand).
  has_column() {
    [ "$(psql "$url" -XAtc "SELECT count(*) FROM information_schema.columns WHERE table_name = 'job_queue' AND column_name = '$1'")" = 1 ]
  }
  has_column user_id || owner=""
  has_column turn || { turn=""; turns=""; }
  psql "$url" -Xq -v ON_ERROR_STOP=1 -v jobs="$jobs" -v tenants="$tenants" -v job_type="$job_type" -v params="$params" \
    -v owner="$owner" -v turn="$turn" -v turns="$turns" <<'SQL'
WITH recorded AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
    SELECT errand_uuid_v7(), 'tenant-' || (i % :tenants), 'bench', 'drain-' || i, '\x00', :'job_type', :'params', 3
    FROM generate_series(1, :jobs) AS i
    RETURNING id, tenant_id, user_id, job_type, run_at
)
INSERT INTO job_queue (job_id, tenant_id :owner, job_type, run_at :turn)
SELECT id, tenant_id :owner, job_type, run_at :turns FROM recorded;
VACUUM ANALYZE jobs;
VACUUM ANALYZE job_queue;
SQL
}

# Waits until database <url>'s queue is empty, then prints "<prefix>
# jobs=<N> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q>
# claim_to_end_ms=<H>", timed on the database's clock from <started> to the
# last job's finished_at, and from the first job's started_at to the same;
# <H> is the median from a job's claim (started_at) to its end's statement
# (finished_at): how long each job counted against its tenant's limit. A
# drain of tenants at their limits goes at about their slots over this
# (plus the wait for the next claim), so it says whether a change moved the
# drain by its statements' cost or by the pipeline's latency.
# It looks every 20 ms over one connection, with a query that stops at the
# first row left, as bench/graphile/drain.mjs looks for graphile-worker's
# end. (A psql started every 200 ms to count the whole queue took about 6 %
# of the machine's CPU samples in a drain, which the peer's way does not:
# errand's drains ran 3 % faster and their CPU per job 10 % lower without it.)
errand_drain_timed() {
  local url=$1 started=$2 prefix=$3 left=t poll_in poll_out poll_pid
  coproc ERRAND_POLL { psql "$url" -XAtq -v ON_ERROR_STOP=1; }
  # Kept: bash unsets the coprocess's variables once it has ended.
  poll_in=${ERRAND_POLL[1]} poll_out=${ERRAND_POLL[0]} poll_pid=$ERRAND_POLL_PID
  while [ "$left" = t ]; do
    printf '%s\n' "SELECT EXISTS (SELECT 1 FROM job_queue);" >&"$poll_in"
    # psql stops at an error (ON_ERROR_STOP): no answer then, rather than a wait for ever.
    read -r left <&"$poll_out" || { errand_log "the queue's poll stopped"; return 1; }
    # The pause, here rather than in the database: a statement that sleeps
    # holds its snapshot, and with it every dead row of the drain (15 % slower).
    read -rt 0.02 -u "$poll_out" _ || true
  done
  eval "exec $poll_in>&-"
  wait "$poll_pid" 2>/dev/null || true
  psql "$url" -XAtqc "SELECT format('%s jobs=%s seconds=%s jobs_per_s=%s busy_seconds=%s busy_jobs_per_s=%s claim_to_end_ms=%s',
      '$prefix', n, round(s::numeric, 3), round(n / s), round(b::numeric, 3), round(n / b), round(m::numeric, 2))
    FROM (SELECT count(*) FILTER (WHERE state = 'completed') AS n,
                 extract(epoch FROM max(finished_at) - '$started'::timestamptz) AS s,
                 extract(epoch FROM max(finished_at) - min(started_at)) AS b,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000) AS m
          FROM jobs) t"
}

errand_drain() {
  local db=$1 jobs=$2 tenants=$3 processes=$4 label=${5:-drain} url started i line cpu_at_start cpu peak
  local job_type=${ERRAND_DRAIN_TYPE:-noop} params=${ERRAND_DRAIN_PARAMS:-'{}'}
  url=$(errand_drain_backlog "$db" "$jobs" "$tenants" "$job_type" "$params")
  started=$(psql "$url" -XAtqc "SELECT clock_timestamp()")
  cpu_at_start=$(errand_cpu_seconds)
  for ((i = 0; i < processes; i++)); do
    RUST_LOG=warn ERRAND_DATABASE__URL=$url ERRAND_HTTP__BIND=127.0.0.1:0 ERRAND_AUTH__JWT_SECRET=$SECRET \
      "$bin/errand" serve >/dev/null &
    ERRAND_DRAIN_PIDS+=($!)
  done
  line=$(errand_drain_timed "$url" "$started" "errand $label")
  cpu=$(errand_cpu_us_per_job "$cpu_at_start" "$jobs")
  peak=$(errand_peak_rss_mb "${ERRAND_DRAIN_PIDS[@]}")
  errand_stop_drain
  # Kept in the order earlier results were written: label, jobs, tenants, processes, timing.
  printf '%s cpu_us_per_job=%s peak_rss_mb=%s\n' "$line" "$cpu" "$peak" \
    | sed "s/ seconds=/ tenants=$tenants processes=$processes seconds=/"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
