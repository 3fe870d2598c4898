# Drains through the external worker API: a backlog of no-op jobs of an
# external type, taken by Python worker processes (clients/python), timed
# as bench/drain.sh times errand's own workers. Sourced by scripts/bench
# after `base`, `bin` and `SECRET` are set.
#
#   errand_pull_drain <database> <jobs> <worker processes> <concurrency each>
#
# prints
#   pull workers=<P>x<C> jobs=<N> seconds=<S> jobs_per_s=<R>

ERRAND_PULL_PIDS=()

errand_stop_pull() {
  local pid
  for pid in "${ERRAND_PULL_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${ERRAND_PULL_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ERRAND_PULL_PIDS=()
}

# A virtualenv with the worker package, made once per pyproject.toml in the tools cache.
errand_python_worker_env() {
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools} dir
  dir="$tools/bench-python-worker-$(sha256sum clients/python/pyproject.toml | cut -c1-12)"
  if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir" && "$dir/bin/pip" install --quiet --disable-pip-version-check ./clients/python && touch "$dir/.ready"
  fi
  printf '%s\n' "$dir"
}

errand_pull_drain() {
  local db=$1 jobs=$2 processes=$3 concurrency=$4 url fifo line address started token venv i
  venv=$(errand_python_worker_env)
  url=$(errand_drain_backlog "$db" "$jobs" 32 noop_external '{}')
  fifo=$(mktemp -u); mkfifo "$fifo"
  RUST_LOG=warn ERRAND_DATABASE__URL=$url ERRAND_HTTP__BIND=127.0.0.1:0 ERRAND_AUTH__JWT_SECRET=$SECRET \
    ERRAND_JOB_TYPES__NOOP_EXTERNAL__HANDLER=external "$bin/errand" serve >"$fifo" &
  ERRAND_PULL_PIDS+=($!)
  read -r line <"$fifo"; rm -f "$fifo"
  address="http://${line##* }"
  token=$(ERRAND_AUTH__JWT_SECRET=$SECRET "$bin/errand" token --worker --user bench --types noop_external)
  started=$(psql "$url" -XAtqc "SELECT clock_timestamp()")
  for ((i = 0; i < processes; i++)); do
    "$venv/bin/python" bench/python_worker.py "$address" "$token" "$concurrency" >/dev/null 2>&1 &
    ERRAND_PULL_PIDS+=($!)
  done
  line=$(errand_drain_timed "$url" "$started" "pull workers=${processes}x$concurrency")
  errand_stop_pull
  printf '%s\n' "$line"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
