# The ceiling ladder: what each of errand's guarantees costs a drain, as
# pgbench workloads that add one guarantee a rung, from a minimal queue up to
# errand's own claim and end statements (bench/ceiling.sh's workload). Meant
# to be sourced (by scripts/bench, after scripts/lib.sh; it sources
# bench/drain.sh for the CPU counters if that is not loaded yet). Defines
#
#   errand_ladder <server-url> <jobs>
#
# which, for each rung in turn, makes a database on the server of
# <server-url> (any database of it; named $ERRAND_LADDER_DB, default
# errand_ladder_<pid>, dropped after the rung), gives it the rung's schema,
# inserts a backlog of <jobs> no-op jobs round-robin over 32 tenants in one
# statement (timed), vacuums and analyzes it, takes a checkpoint (so that
# every rung's drain writes the full page images of the pages it touches
# first: its WAL does not depend on when the server last checkpointed), and
# drains it with pgbench (-M prepared, jit off as errand's sessions have it,
# $ERRAND_LADDER_CLIENTS clients, default 2, as bench/ceiling.sh), passes of
# as many transactions as the backlog left needs until the queue is empty.
# Every transaction claims up to K jobs, K being errand's claim's
# (bench/ceiling_script.py's claim_jobs: half of global_limit), and ends them.
# The rungs, bottom up (schema: bench/ladder/schema.sql's sections; the
# statements: bench/ladder/<script>.sql):
#
#   delete        a minimal queue table; one statement claims (SELECT ...
#                 ORDER BY due LIMIT K FOR UPDATE SKIP LOCKED) and deletes:
#                 the job is gone, no history
#   update        history, in errand's shape: errand's `jobs` beside a narrow
#                 `job_queue`; one statement claims, deletes the queue rows
#                 and updates the records to completed
#   notification  + a notification row per job (errand's table, its unique
#                 key and foreign key)
#   counts        + errand's unfinished_counts (by generation, as V3), kept
#                 by its statement-level triggers on the queue's insert (paid
#                 by the backlog's insert) and delete (paid by the drain)
#   pg_notify     + one pg_notify on errand_notifications a transaction,
#                 naming the notified owners, as errand announces them
#   lease         the same work as two transactions, as a worker that
#                 survives crashes needs: a claim that commits on its own
#                 (rows running under a lease), then the end fenced on it
#   errand        errand's own: its migrations, its backlog
#                 (bench/drain.sh's statement), and its claim and end
#                 statements bound as bench/ceiling.sh binds them
#
# and prints a line a rung:
#   ladder <rung> jobs=<N> batch=<K> seconds=<S> jobs_per_s=<R> cpu_us_per_job=<U> commits_per_job=<C> wal_bytes_per_job=<W> insert_seconds=<I>
# seconds: the pgbench passes' time without their connections' (each pass's
#   transactions at its rate "without initial connection time"), added up;
# cpu_us_per_job: the machine's CPU time from the first check of the queue
#   to the last (pgbench's, PostgreSQL's and the checks' psql, connections
#   included), per job, as bench/drain.sh and bench/ceiling.sh count it;
# commits_per_job: the database's xact_commit (pg_stat_database) over the
#   drain, per job, less the commits of connections (each one's start is a
#   transaction: pgbench's first and its clients', the checks' psql, whose
#   query is one more); left in are each client's preparation of each
#   statement it runs (one commit each, a few a pass) and, in errand's
#   script, its clients' first SELECT of a pass;
# wal_bytes_per_job: pg_current_wal_lsn() after the drain less before, per
#   job: the whole server's WAL, whatever else runs on it;
# insert_seconds: the backlog's INSERT statement, its commit included, on
#   the database's clock (the vacuum and analyze after it left out).
# The CPU and WAL figures count whatever else the machine and the server do
# meanwhile: compare rungs of one run, on a quiet machine.

ERRAND_LADDER_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
declare -F errand_cpu_seconds >/dev/null || source "$ERRAND_LADDER_SRC/drain.sh"

# The rungs, bottom up: name, schema sections (bench/ladder/schema.sql's
# booleans, "errand" for errand's migrations), pgbench script
# (bench/ladder/<script>.sql; "errand" for bench/ceiling_script.py's).
ERRAND_LADDER_RUNGS=(
  "delete       -                                    delete"
  "update       history                              update"
  "notification history,notifications                notification"
  "counts       history,notifications,counts         notification"
  "pg_notify    history,notifications,counts         pg_notify"
  "lease        history,notifications,counts,lease   lease"
  "errand       errand                               errand"
)

# Waits until no client is connected to database <db> of the server <url>:
# a backend adds its counts to pg_stat_database as it exits, which may be
# after its client has gone.
errand_ladder_settle() {
  local server=$1 db=$2 connected
  while connected=$(psql "$server" -XAtqc "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND backend_type = 'client backend'") \
      && [ "$connected" != 0 ]; do
    sleep 0.01
  done
  [ -n "$connected" ]
}

# The database's commits so far and the server's WAL position, as "<commits> <lsn>".
errand_ladder_counters() {
  local server=$1 db=$2
  psql "$server" -XAtqc "SELECT xact_commit, pg_current_wal_lsn() FROM pg_stat_database WHERE datname = '$db'" | tr '|' ' '
}

# Drops database <db> of the server <url> and removes the file <log>.
errand_ladder_drop() {
  psql "$1" -Xqc "DROP DATABASE $2 WITH (FORCE)"
  rm -f "$3"
}

# One rung: errand_ladder_rung <server-url> <jobs> <rung> <sections> <script file> <batch> [pgbench -D words...]
errand_ladder_rung() {
  local server=$1 jobs=$2 rung=$3 sections=$4 script=$5 batch=$6; shift 6
  local tenants=32 clients=${ERRAND_LADDER_CLIENTS:-2} root db query="" url f flag table ok
  local insert_seconds remaining left done_jobs per_client per_txn passes=0 seconds=0 before after cpu_at_start cpu log
  local commits_before commits_after lsn_before lsn_after
  local schema_vars=() defines=("$@")
  root=$(cd "$ERRAND_LADDER_SRC/.." && pwd)
  db=${ERRAND_LADDER_DB:-errand_ladder_$$}
  [[ $server == *\?* ]] && query="?${server#*\?}"
  url="${server%%\?*}"; url="${url%/*}/$db$query"
  for flag in history notifications counts lease errand; do
    if [[ ,$sections, == *,$flag,* ]]; then schema_vars+=(-v "$flag=on"); else schema_vars+=(-v "$flag=off"); fi
  done
  table=job_queue; [ "$sections" = - ] && table=queue
  log=$(mktemp)

  psql "$server" -Xqc "CREATE DATABASE $db" || { rm -f "$log"; return 1; }
  if [ "$sections" = errand ]; then
    # errand's schema: every V<n>__*.sql of migrations/, by version number, each in one transaction.
    for f in $(ls "$root"/migrations/V*__*.sql | sed 's|.*/V\([0-9]*\)__[^/]*$|\1 &|' | sort -n | cut -d' ' -f2-); do
      psql "$url" -Xq -1 -v ON_ERROR_STOP=1 -f "$f" >/dev/null || { errand_log "ladder: $f failed"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
    done
  else
    psql "$url" -Xq -1 -v ON_ERROR_STOP=1 "${schema_vars[@]}" -f "$ERRAND_LADDER_SRC/ladder/schema.sql" >/dev/null \
      || { errand_log "ladder: $rung: the schema failed"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
  fi
  insert_seconds=$(PGOPTIONS="${PGOPTIONS:-} -c jit=off" psql "$url" -XAtq -v ON_ERROR_STOP=1 "${schema_vars[@]}" \
      -v jobs="$jobs" -v tenants="$tenants" -f "$ERRAND_LADDER_SRC/ladder/insert.sql") \
    || { errand_log "ladder: $rung: the backlog's insert failed"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
  psql "$url" -Xq -v ON_ERROR_STOP=1 -c "VACUUM (ANALYZE)" -c CHECKPOINT \
    || { errand_log "ladder: $rung: vacuum or checkpoint failed"; errand_ladder_drop "$server" "$db" "$log"; return 1; }

  errand_ladder_settle "$server" "$db" && before=$(errand_ladder_counters "$server" "$db") \
    || { errand_log "ladder: $rung: cannot read the counters"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
  cpu_at_start=$(errand_cpu_seconds)
  # Passes of as many transactions as the jobs left need, at the jobs a
  # transaction took in the pass before (K at first: the claims of the rungs
  # below errand's get K while K are left; errand's may get fewer, when the
  # other client holds the tenants they would take, or their limits).
  per_txn=$batch
  while remaining=$(psql "$url" -XAtqc "SELECT count(*) FROM $table") && [ "$remaining" != 0 ]; do
    if [ "$passes" -gt 0 ]; then
      done_jobs=$((left - remaining))
      [ "$done_jobs" -gt 0 ] || { errand_log "ladder: $rung: a pass ended no job"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
      per_txn=$(( done_jobs / (clients * per_client) )); [ "$per_txn" -gt 0 ] || per_txn=1
    fi
    left=$remaining
    per_client=$(( (remaining + clients * per_txn - 1) / (clients * per_txn) ))
    if ! PGOPTIONS="${PGOPTIONS:-} -c jit=off" pgbench -n -M prepared -c "$clients" -j "$clients" -t "$per_client" \
        -D batch="$batch" "${defines[@]}" -f "$script" "$url" >"$log" 2>&1; then
      errand_log "ladder: $rung: pgbench failed:"; tail -5 "$log" >&2
      errand_ladder_drop "$server" "$db" "$log"; return 1
    fi
    passes=$((passes + 1))
    # The pass's time without its connections': its transactions at pgbench's
    # rate "without initial connection time".
    seconds=$(awk -v s="$seconds" '/^number of transactions actually processed:/ { split($6, n, "/") }
                                   /^tps = / { t = $3 } END { printf "%.6f", s + n[1] / t }' "$log")
  done
  [ -n "$remaining" ] || { errand_log "ladder: $rung: the queue's check failed"; errand_ladder_drop "$server" "$db" "$log"; return 1; }
  cpu=$(errand_cpu_us_per_job "$cpu_at_start" "$jobs")
  errand_ladder_settle "$server" "$db" && after=$(errand_ladder_counters "$server" "$db") \
    || { errand_log "ladder: $rung: cannot read the counters"; errand_ladder_drop "$server" "$db" "$log"; return 1; }

  # Every job ended as the rung ends them: records completed, a notification
  # each, the counts back to nothing.
  ok="SELECT true"
  [[ ,$sections, == *,history,* || $sections = errand ]] \
    && ok="$ok AND (SELECT count(*) FROM jobs WHERE state = 'completed') = $jobs"
  [[ ,$sections, == *,notifications,* || $sections = errand ]] \
    && ok="$ok AND (SELECT count(*) FROM notifications) = $jobs"
  [[ ,$sections, == *,counts,* || $sections = errand ]] \
    && ok="$ok AND (SELECT count(*) FROM unfinished_counts) > 0 AND NOT EXISTS (SELECT 1 FROM unfinished_counts WHERE jobs <> 0)"
  if [ "$(psql "$url" -XAtqc "$ok")" != t ]; then
    errand_log "ladder: $rung: the drain did not end every job as the rung ends them"; errand_ladder_drop "$server" "$db" "$log"; return 1
  fi

  read -r commits_before lsn_before <<<"$before"
  read -r commits_after lsn_after <<<"$after"
  psql "$server" -XAtqc "SELECT format('ladder %s jobs=%s batch=%s seconds=%s jobs_per_s=%s cpu_us_per_job=%s commits_per_job=%s wal_bytes_per_job=%s insert_seconds=%s',
      '$rung', $jobs, $batch, round($seconds, 3), round($jobs / $seconds), $cpu,
      round(($commits_after - $commits_before - 2 * ($passes + 1) - ($clients + 1) * $passes)::numeric / $jobs, 4),
      round(pg_wal_lsn_diff('$lsn_after', '$lsn_before') / $jobs), $insert_seconds)"
  errand_ladder_drop "$server" "$db" "$log"
}

errand_ladder() {
  local server=$1 jobs=$2 root errand_script settings batch lease_ms owner kv line rung sections script
  local defines=()
  root=$(cd "$ERRAND_LADDER_SRC/.." && pwd)
  errand_script=$(mktemp)
  # errand's statements and batch size, as bench/ceiling.sh reads them.
  settings=$(python3 "$ERRAND_LADDER_SRC/ceiling_script.py" "$root" "$errand_script") || { rm -f "$errand_script"; return 1; }
  for kv in $settings; do defines+=(-D "$kv"); done
  batch=$(tr ' ' '\n' <<<"$settings" | sed -n 's/^claim_jobs=//p')
  lease_ms=$(tr ' ' '\n' <<<"$settings" | sed -n 's/^lease_ms=//p')
  owner=$(psql "$server" -XAtqc "SELECT gen_random_uuid()")
  for line in "${ERRAND_LADDER_RUNGS[@]}"; do
    read -r rung sections script <<<"$line"
    if [ "$script" = errand ]; then
      errand_ladder_rung "$server" "$jobs" "$rung" "$sections" "$errand_script" "$batch" \
        -D fresh=1 -D owner="$owner" "${defines[@]}" || { rm -f "$errand_script"; return 1; }
    else
      errand_ladder_rung "$server" "$jobs" "$rung" "$sections" "$ERRAND_LADDER_SRC/ladder/$script.sql" "$batch" \
        -D owner="$owner" -D lease_ms="$lease_ms" || { rm -f "$errand_script"; return 1; }
    fi
  done
  rm -f "$errand_script"
}
