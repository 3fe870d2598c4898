# Memory (issue 42, item 6): what a worker slot and a job's params cost
# errand's process at its peak. Sourced by scripts/bench after `base`, `bin`
# and `SECRET` are set (and bench/drain.sh, whose drains print peak_rss_mb=,
# the processes' VmHWM read just before they stop).
#
#   errand_memory
#
# prints, one line each:
#   * a worker slot: drains of sleep jobs (2 s each, two per slot, one tenant
#     per slot so every slot is busy at once) at 10, 100 and 1,000 slots
#     (workers.global_limit); the slope between 10 and 1,000 is a slot's cost;
#   * params: a drain of 50,000 no-op jobs whose params are 10 MB in all
#     (about 210 bytes each) beside the same drain with empty params.
# Jobs claimed ahead of a free slot (actors/running/dispatcher/claimed_ahead.rs)
# are at most 10 ms of starts, each its params and a few hundred bytes: the
# params drain shows whether they add up to anything.

errand_memory() {
  local slots line low high pad
  for slots in 10 100 1000; do
    line=$(ERRAND_WORKERS__GLOBAL_LIMIT=$slots ERRAND_WORKERS__TENANT_LIMIT=2 ERRAND_DRAIN_TYPE=sleep \
      ERRAND_DRAIN_PARAMS='{"ms": 2000}' errand_drain "errand_memory_$stamp" $((slots * 2)) "$slots" 1 "slots-$slots")
    echo "$line"
    [ "$slots" = 10 ] && low=$(sed -n 's/.*peak_rss_mb=\([0-9.]*\).*/\1/p' <<<"$line")
    [ "$slots" = 1000 ] && high=$(sed -n 's/.*peak_rss_mb=\([0-9.]*\).*/\1/p' <<<"$line")
  done
  awk -v l="$low" -v h="$high" 'BEGIN { printf "memory: a worker slot %.1f KB at peak ((%s - %s MB) / 990 slots)\n", (h - l) * 1024 / 990, h, l }'
  errand_drain "errand_memory_$stamp" 50000 32 1 "params-empty"
  pad=$(head -c 200 /dev/zero | tr '\0' x)
  ERRAND_DRAIN_PARAMS="{\"pad\": \"$pad\"}" errand_drain "errand_memory_$stamp" 50000 32 1 "params-10MB"
}
