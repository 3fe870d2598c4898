# A pg_auto_failover formation on this machine, for failover tests: a monitor
# and two data nodes (node1, node2), all on 127.0.0.1, trust auth, no SSL.
#
#   . scripts/failover.sh                  # or: bash scripts/failover.sh <cmd> <dir> [...]
#   errand_failover_up /tmp/fo             # prints the URL (also in /tmp/fo/url)
#   errand_failover_switchover /tmp/fo     # planned: the secondary becomes primary
#   errand_failover_kill_primary /tmp/fo   # unplanned: prints the killed node's name
#   errand_failover_restart_node /tmp/fo node1
#   errand_failover_primary_port /tmp/fo
#   errand_failover_down /tmp/fo           # stops it all (call it after a failed up too); rm -rf is the caller's
#
# The URL is postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/postgres?target_session_attrs=read-write&connect_timeout=3;
# the database $ERRAND_FAILOVER_DB (default errand) is made on the primary.
# Ports: the first three free ones from ${ERRAND_FAILOVER_PORT:-56432} (monitor, node1, node2).
# Each wait gives up after ${ERRAND_FAILOVER_TIMEOUT:-60} s. Run as root (or as postgres):
# PostgreSQL refuses root, so everything runs as the postgres OS user, and <dir>
# (made if missing) must be reachable by it (e.g. under /tmp, not /root).

declare -F errand_apt_install >/dev/null || . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ERRAND_AUTOFAILOVER_VERSION=2.0-2+b1 # Debian's postgresql-15-auto-failover, when the mirror has it
ERRAND_FAILOVER_PGBIN=${ERRAND_FAILOVER_PGBIN:-/usr/lib/postgresql/15/bin}
ERRAND_FAILOVER_DB=${ERRAND_FAILOVER_DB:-errand}

# Installs pg_autoctl (and the monitor's extension) from apt when missing.
errand_install_autofailover() {
  command -v pg_autoctl >/dev/null 2>&1 && return 0
  errand_apt_install postgresql-15-auto-failover "$ERRAND_AUTOFAILOVER_VERSION" "the failover test"
}

# Sets _FO_ARGV to the prefix that runs a command as postgres, with
# pg_autoctl's config/state/pid files kept under <dir>/xdg. setpriv and env
# exec (runuser forks), so `$!` of a background run is pg_autoctl's own PID.
_fo_argv() {
  _FO_ARGV=()
  [ "$(id -u)" = 0 ] && _FO_ARGV=(setpriv --reuid=postgres --regid=postgres --init-groups --reset-env)
  _FO_ARGV+=(env PATH="$ERRAND_FAILOVER_PGBIN:/usr/local/bin:/usr/bin:/bin" XDG_CONFIG_HOME="$1/xdg/config"
    XDG_DATA_HOME="$1/xdg/data" XDG_RUNTIME_DIR="$1/xdg/run")
}
_fo_as_pg() { _fo_argv "$1"; shift; "${_FO_ARGV[@]}" "$@"; }

_fo_port() { cat "$1/$2.port"; }

# psql on one instance of the formation: _fo_sql <dir> <name> <database> <sql>
_fo_sql() {
  psql "postgres://postgres@127.0.0.1:$(_fo_port "$1" "$2")/$3?connect_timeout=3" -XAtq -v ON_ERROR_STOP=1 -c "$4" 2>/dev/null
}

# Polls a command every 0.2 s until it succeeds: _fo_wait <dir> <what> <cmd...>
_fo_wait() {
  local dir=$1 what=$2 log deadline=$((SECONDS + ${ERRAND_FAILOVER_TIMEOUT:-60}))
  shift 2
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      errand_log "failover: gave up after ${ERRAND_FAILOVER_TIMEOUT:-60} s waiting for $what (logs: $dir/*.log)"
      _fo_as_pg "$dir" pg_autoctl show state --pgdata "$dir/monitor" >&2 || true
      for log in "$dir"/*.log; do echo "== the end of $log" >&2 && tail -n 15 "$log" >&2; done
      return 1
    fi
    sleep 0.2
  done
}

# Starts `pg_autoctl run` of one instance in the background; its PID goes to <dir>/<name>.pid.
_fo_run() {
  _fo_argv "$1"
  "${_FO_ARGV[@]}" pg_autoctl run --pgdata "$1/$2" </dev/null >>"$1/$2.log" 2>&1 &
  echo $! >"$1/$2.pid"
}

# pg_autoctl sizes each instance for the whole machine (shared_buffers = 1/4 of
# RAM): settings after its include in postgresql.conf take precedence.
_fo_small() {
  printf '%s\n' "# errand: three instances share this machine" "shared_buffers = '128MB'" \
    "maintenance_work_mem = '64MB'" "max_connections = 300" "fsync = off" >>"$1/postgresql.conf"
}

_fo_alive() { [ -s "$1/$2.pid" ] && kill -0 "$(cat "$1/$2.pid")" 2>/dev/null; }
_fo_dead() { ! _fo_alive "$@"; }

# Says what failed, with the end of its log: the test that ran this removes
# <dir> when it fails, log and all. _fo_failed <dir> <name> <what>
_fo_failed() {
  errand_log "failover: $3 failed; the end of $1/$2.log:"
  tail -n 40 "$1/$2.log" >&2 || true
}

# True when the monitor has <node> up as the only node, a primary alone.
_fo_single() {
  [ "$(_fo_sql "$1" monitor pg_auto_failover "SELECT bool_and(reportedstate = 'single' AND goalstate = 'single')
      FROM pgautofailover.node WHERE nodename = '$2'")" = t ]
}

# True when the monitor sees one healthy primary and one healthy secondary.
_fo_healthy() {
  [ "$(_fo_sql "$1" monitor pg_auto_failover "SELECT count(*) FILTER (WHERE reportedstate = 'primary')
      = 1 AND count(*) FILTER (WHERE reportedstate = 'secondary') = 1 AND bool_and(health = 1 AND
      reportedstate = goalstate) FROM pgautofailover.node")" = t ]
}

# Name of the node the monitor has as primary (primary, or wait_primary when alone).
_fo_primary() {
  _fo_sql "$1" monitor pg_auto_failover "SELECT nodename FROM pgautofailover.node WHERE reportedstate
      IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate" | grep .
}

# True when <node> is the monitor's primary and takes a write.
_fo_writable() {
  [ "$(_fo_primary "$1")" = "$2" ] &&
    [ -n "$(_fo_sql "$1" "$2" postgres "SELECT txid_current() WHERE NOT pg_is_in_recovery()")" ]
}
# True when a node other than <old> is the primary and takes a write.
_fo_new_primary() { local n; n=$(_fo_primary "$1") && [ "$n" != "$2" ] && _fo_writable "$1" "$n"; }

errand_failover_primary_port() { local d n; d=$(_fo_dir "$1") && n=$(_fo_primary "$d") && _fo_port "$d" "$n"; }

# pg_autoctl keys its files by absolute paths: every function takes <dir> through this.
_fo_dir() { realpath -e "$1" 2>/dev/null || { errand_log "failover: no directory $1"; return 1; }; }

errand_failover_up() {
  local dir=$1 name setting ports t0=$SECONDS
  errand_install_autofailover || return 1
  [ -e "$dir/monitor" ] && { errand_log "failover: $dir holds a formation already (down it, then rm -rf it)"; return 1; }
  mkdir -p "$dir/xdg/run" && chmod 700 "$dir/xdg/run" && dir=$(_fo_dir "$dir") || return 1
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$dir"
    install -d -o postgres -g postgres -m 2775 /var/run/postgresql # the servers' Unix sockets
  fi
  _fo_as_pg "$dir" test -w "$dir/xdg/run" || { errand_log "failover: $dir is out of the postgres user's reach"; return 1; }
  read -r -a ports < <(python3 - "${ERRAND_FAILOVER_PORT:-56432}" <<'EOF'
import socket, sys
port, found = int(sys.argv[1]), []
while len(found) < 3 and port < 65535:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as postgres: TIME_WAIT is no obstacle
        try: s.bind(("127.0.0.1", port)); found.append(port)
        except OSError: pass
    port += 1
print(*found)
EOF
  )
  [ "${#ports[@]}" = 3 ] || { errand_log "failover: no free ports"; return 1; }
  for name in monitor node1 node2; do echo "${ports[0]}" >"$dir/$name.port" && ports=("${ports[@]:1}"); done
  errand_log "failover: monitor, node1, node2 on ports $(cat "$dir"/{monitor,node1,node2}.port | xargs), in $dir"
  # The monitor.
  _fo_as_pg "$dir" pg_autoctl create monitor --pgdata "$dir/monitor" --pgport "$(_fo_port "$dir" monitor)" \
    --hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl >"$dir/monitor.log" 2>&1 ||
    { _fo_failed "$dir" monitor "creating the monitor"; return 1; }
  _fo_small "$dir/monitor"
  _fo_run "$dir" monitor
  _fo_wait "$dir" "the monitor" _fo_sql "$dir" monitor pg_auto_failover "SELECT 1" >/dev/null || return 1
  # Fast failure detection (defaults: 5 s checks, 20 s unhealthy, 30 s demote timeout).
  for setting in health_check_period=1000 health_check_timeout=1000 health_check_max_retries=1 \
    health_check_retry_delay=500 node_considered_unhealthy_timeout=2000 primary_demote_timeout=3000 \
    startup_grace_period=2000; do
    _fo_sql "$dir" monitor postgres "ALTER SYSTEM SET pgautofailover.${setting%=*} = ${setting#*=}" >/dev/null ||
      { errand_log "failover: setting pgautofailover.$setting on the monitor failed"; return 1; }
  done
  _fo_sql "$dir" monitor postgres "SELECT pg_reload_conf()" >/dev/null || return 1
  # The data nodes: node1 starts as primary, node2 clones it as its secondary.
  for name in node1 node2; do
    _fo_as_pg "$dir" pg_autoctl create postgres --pgdata "$dir/$name" --pgport "$(_fo_port "$dir" "$name")" \
      --name "$name" --hostname 127.0.0.1 --listen 127.0.0.1 --dbname "$ERRAND_FAILOVER_DB" --auth trust \
      --no-ssl --monitor "postgres://autoctl_node@127.0.0.1:$(_fo_port "$dir" monitor)/pg_auto_failover?sslmode=disable" \
      >"$dir/$name.log" 2>&1 || { _fo_failed "$dir" "$name" "creating $name"; return 1; }
    _fo_small "$dir/$name"
    _fo_run "$dir" "$name"
    # node2 clones a primary that is up: the monitor may refuse a node that
    # registers while the first one is still being initialised.
    if [ "$name" = node1 ]; then _fo_wait "$dir" "node1 up alone" _fo_single "$dir" node1 || return 1; fi
  done
  _fo_wait "$dir" "a healthy primary and secondary" _fo_healthy "$dir" || return 1
  printf 'postgres://postgres@127.0.0.1:%s,127.0.0.1:%s/postgres?target_session_attrs=read-write&connect_timeout=3\n' \
    "$(_fo_port "$dir" node1)" "$(_fo_port "$dir" node2)" | tee "$dir/url"
  errand_log "failover: up in $((SECONDS - t0)) s"
}

errand_failover_switchover() {
  local dir old t0=$SECONDS
  dir=$(_fo_dir "$1") || return 1
  old=$(_fo_primary "$dir") || { errand_log "failover: no primary to switch over from"; return 1; }
  _fo_as_pg "$dir" pg_autoctl perform switchover --pgdata "$dir/monitor" >>"$dir/switchover.log" 2>&1 ||
    { errand_log "failover: pg_autoctl perform switchover failed: see $dir/switchover.log"; return 1; }
  _fo_wait "$dir" "a new primary" _fo_new_primary "$dir" "$old" &&
    _fo_wait "$dir" "$old back as secondary" _fo_healthy "$dir" || return 1
  errand_log "failover: switched over from $old to $(_fo_primary "$dir") in $((SECONDS - t0)) s"
}

# Stops the primary's pg_autoctl and Postgres at once (--immediate) and waits
# for the other node to take writes. Prints the killed node's name.
errand_failover_kill_primary() {
  local dir old other t0=$SECONDS
  dir=$(_fo_dir "$1") || return 1
  old=$(_fo_primary "$dir") || { errand_log "failover: no primary to kill"; return 1; }
  other=node1; [ "$old" = node1 ] && other=node2
  _fo_as_pg "$dir" pg_autoctl stop --immediate --pgdata "$dir/$old" >>"$dir/$old.log" 2>&1 ||
    { errand_log "failover: pg_autoctl stop --immediate of $old failed"; return 1; }
  _fo_wait "$dir" "$old to stop" _fo_dead "$dir" "$old" || return 1
  rm -f "$dir/$old.pid"
  _fo_wait "$dir" "$other to take over" _fo_writable "$dir" "$other" || return 1
  errand_log "failover: killed $old, $other took writes after $((SECONDS - t0)) s"
  echo "$old"
}

# Starts a stopped node again and waits for it to be a healthy secondary.
errand_failover_restart_node() {
  local dir name=$2 t0=$SECONDS
  dir=$(_fo_dir "$1") || return 1
  _fo_alive "$dir" "$name" && { errand_log "failover: $name is running already"; return 1; }
  _fo_run "$dir" "$name"
  _fo_wait "$dir" "$name to rejoin" _fo_healthy "$dir" || return 1
  errand_log "failover: $name rejoined as secondary in $((SECONDS - t0)) s"
}

# Stops everything: pg_autoctl stop to all three at once, then waits for each
# PID (signals it if pg_autoctl stop fails or takes over 30 s).
errand_failover_down() {
  local dir name
  dir=$(_fo_dir "$1") || return 1
  for name in node2 node1 monitor; do
    _fo_alive "$dir" "$name" && { _fo_as_pg "$dir" pg_autoctl stop --pgdata "$dir/$name" >>"$dir/$name.log" 2>&1 ||
      kill "$(cat "$dir/$name.pid")"; }
  done
  for name in node2 node1 monitor; do
    [ -d "$dir/$name" ] || continue
    ERRAND_FAILOVER_TIMEOUT=30 _fo_wait "$dir" "$name to stop" _fo_dead "$dir" "$name" ||
      kill -9 "$(cat "$dir/$name.pid")" 2>/dev/null
    # A Postgres left behind by a pg_autoctl that died.
    _fo_as_pg "$dir" pg_ctl -D "$dir/$name" status >/dev/null 2>&1 &&
      _fo_as_pg "$dir" pg_ctl -D "$dir/$name" -m immediate -w stop >/dev/null 2>&1
    rm -f "$dir/$name.pid"
  done
  errand_log "failover: stopped the formation in $dir"
}

# As a command: bash scripts/failover.sh up|switchover|kill_primary|restart_node|primary_port|down <dir> [node]
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -u
  cmd=${1:?usage: failover.sh up|switchover|kill_primary|restart_node|primary_port|down <dir> [node]}
  shift
  "errand_failover_$cmd" "$@"
fi
