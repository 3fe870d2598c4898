# Sustained load (issue 42, item 4): hours of steady traffic compress into
# SUSTAIN_SECONDS (1,800 unless set) at one rate, on a database that already
# holds a history, with the two things that hurt a PostgreSQL queue in
# production happening half-way: a transaction another client leaves open
# (the xmin horizon: no dead row newer than it can be vacuumed), and
# long readers of the history. Sourced by scripts/bench after `base`, `bin`,
# `SECRET`, `stamp` and its start_errand/stop_errand are defined; the peers'
# sides are bench/graphile/run.sh and bench/awa/run.sh's *_sustained.
#
#   errand_sustained <database> <rate> <seconds> <out-dir>
#
# writes into <out-dir>: latency.csv (submitted,started,finished: epoch
# seconds, one row per job of the run), tables.csv (every 10 s, each table's
# live and dead rows, size with its indexes and of its indexes alone, and
# autovacuum runs so far) and events.csv (when each stress phase began and
# ended). bench/sustained/plot.sh draws them.
#
# The schedule, as shares of <seconds> (for 1,800: at 600 s a transaction
# left open for 300 s; at 1,200, 1,240 and 1,280 s three readers of the
# history, 120 s each), is sustained_stress's, the same for every system.

# Every 10 s until killed, a row per table of <tables...> (schema-qualified)
# of database <url> appended to <out.csv> (header written first). A
# partitioned table (awa's rings) is the sum of its partitions: the parent
# itself holds nothing. A table not made yet (a peer migrates as it starts)
# is left out of that sample.
sustained_sample_tables() {
  local url=$1 out=$2; shift 2
  local list
  list=$(printf "'%s'," "$@"); list=${list%,}
  echo "t,table,live,dead,total_bytes,index_bytes,autovacuum_count" >"$out"
  while :; do
    psql "$url" -XAtF, -c "
      SELECT extract(epoch FROM now()), t.name, sum(s.n_live_tup), sum(s.n_dead_tup),
             sum(pg_total_relation_size(s.relid)), sum(pg_indexes_size(s.relid)), sum(s.autovacuum_count)
      FROM unnest(ARRAY[$list]) AS t (name)
      CROSS JOIN LATERAL (SELECT relid FROM pg_partition_tree(to_regclass(t.name))
                          UNION SELECT to_regclass(t.name)) AS leaf
      JOIN pg_stat_user_tables s ON s.relid = leaf.relid
      GROUP BY t.name" >>"$out" 2>/dev/null || true
    sleep 10
  done
}

# A transaction that holds an xid and its snapshot for <seconds> on <url>,
# as a forgotten BEGIN in another client does.
sustained_open_transaction() {
  psql "$1" -Xq <<SQL >/dev/null
BEGIN;
SELECT txid_current();
SELECT pg_sleep($2);
COMMIT;
SQL
}

# A reader of <table> on <url> for <seconds>: one repeatable-read
# transaction walking a cursor 1,000 rows at a time, a page every 0.2 s (a
# report or an export of the history, paced by its consumer).
sustained_reader() {
  local url=$1 table=$2 seconds=$3 pages
  pages=$((seconds * 5))
  {
    echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"
    echo "DECLARE history NO SCROLL CURSOR FOR SELECT * FROM $table;"
    for ((i = 0; i < pages; i++)); do echo "MOVE 1000 IN history; SELECT pg_sleep(0.2);"; done
    echo "COMMIT;"
  } | psql "$url" -Xq >/dev/null
}

# Runs the stress phases on <url> along a run of <seconds> that began at
# <start> (epoch seconds), reading <history-table>; records them in <events.csv>.
sustained_stress() {
  local url=$1 seconds=$2 start=$3 table=$4 events=$5 open_for readers_at reader_for i readers
  open_for=$((seconds / 6)) readers_at=$((seconds * 2 / 3)) reader_for=$((seconds / 15))
  echo "t,event" >"$events"
  event() { echo "$(date +%s.%N),$1" >>"$events"; }
  sleep_until() { local left; left=$(awk -v s="$start" -v o="$1" -v n="$(date +%s.%N)" 'BEGIN { d = s + o - n; print (d > 0 ? d : 0) }'); sleep "$left"; }
  sleep_until $((seconds / 3))
  event open-transaction-start
  sustained_open_transaction "$url" "$open_for"
  event open-transaction-end
  sleep_until "$readers_at"
  event readers-start
  readers=()
  for i in 0 1 2; do
    (sleep $((i * seconds / 45)); sustained_reader "$url" "$table" "$reader_for") &
    readers+=($!)
  done
  # Only the readers: the caller's producer and sampler run beside them.
  wait "${readers[@]}"
  event readers-end
}

# <jobs> finished jobs of history in database <url> (errand's schema), as a
# service that has run for a while holds: completed no-op jobs over 32
# tenants, finished over the past days; then vacuumed and analyzed, as
# autovacuum would have left them.
errand_sustained_history() {
  psql "$1" -Xq -v ON_ERROR_STOP=1 -v jobs="$2" <<'SQL'
INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts, state,
                  attempt, created_at, run_at, started_at, finished_at, result)
SELECT errand_uuid_v7(), 'history-' || (i % 32), 'bench', 'history-' || i, '\x00', 'noop', '{}', 3, 'completed',
       1, t, t, t, t + interval '5 ms', '{}'
FROM generate_series(1, :jobs) AS i, LATERAL (SELECT now() - (i * interval '250 ms') AS t) at;
VACUUM ANALYZE jobs;
SQL
}

errand_sustained() {
  local db=$1 rate=$2 seconds=$3 out=$4 dburl="$base/$1?sslmode=disable" run="sustained-$stamp" sampler producer
  mkdir -p "$out"
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  RUST_LOG=warn ERRAND_DATABASE__URL=$dburl "$bin/errand" migrate >/dev/null
  errand_sustained_history "$dburl" "${SUSTAIN_HISTORY:-1000000}"
  # Quotas off: a backlog past a user's cap (1,000 unfinished jobs) would be
  # refused with 429, which the peers never do; every job is taken, as theirs.
  errand_env=(ERRAND_QUOTAS__ENABLED=false)
  start_errand "$db"
  errand_env=()
  sustained_sample_tables "$dburl" "$out/tables.csv" public.jobs public.job_queue public.notifications public.unfinished_counts &
  sampler=$!
  "$bin/errand-loadgen" --url "$url" --secret "$SECRET" --run-id "$run" --phases paced --rate "$rate" --seconds "$seconds" \
    --paced-log "$out/sent.csv" &
  producer=$!
  sustained_stress "$dburl" "$seconds" "$(date +%s.%N)" jobs "$out/events.csv"
  wait "$producer"
  until [ "$(psql "$dburl" -XAtc "SELECT count(*) FROM job_queue")" = 0 ]; do sleep 1; done
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  stop_errand
  # Submitted: when the producer's tick sent the request (loadgen's --paced-log),
  # as the peers' producers stamp their jobs, so the POST's own time counts.
  psql "$dburl" -Xq -v ON_ERROR_STOP=1 <<SQL | { echo "submitted,started,finished"; cat; } >"$out/latency.csv"
CREATE TEMP TABLE sent (key text PRIMARY KEY, at double precision);
\copy sent FROM '$out/sent.csv' WITH (FORMAT csv, HEADER)
\pset format unaligned
\pset tuples_only on
\pset fieldsep ,
SELECT s.at, extract(epoch FROM j.started_at), extract(epoch FROM j.finished_at)
FROM jobs j JOIN sent s ON s.key = j.idempotency_key
WHERE j.tenant_id LIKE 'bench-$run-%';
SQL
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}

# A peer (graphile or awa: bench/<peer>/run.sh's errand_bench_<peer>_sustained)
# through the same schedule on a fresh database of its own: its tables
# sampled, the same stress phases (the readers read its job table: a peer
# keeps no history of its own to read), its latencies as errand's.
sustained_peer() {
  local peer=$1 rate=$2 seconds=$3 out=$4 db="errand_${1}_sustained_$stamp" dburl sampler runner tables
  dburl="$base/$db"
  mkdir -p "$out"
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  read -ra tables <<<"$("errand_bench_${peer}_tables")"
  sustained_sample_tables "$dburl" "$out/tables.csv" "${tables[@]}" &
  sampler=$!
  "errand_bench_${peer}_sustained" "$dburl" "$rate" "$seconds" "$out/latency.csv" &
  runner=$!
  sustained_stress "$dburl" "$seconds" "$(date +%s.%N)" "${tables[0]}" "$out/events.csv"
  # A peer that fails (its producer or its drain gave up) is reported and
  # plotted as far as it got; the others still run.
  wait "$runner" || echo "   $peer's sustained run failed (see above)"
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
