#!/usr/bin/env bash
# Draws a sustained-load run: bench/sustained/plot.sh <results-dir> <out.png>
# (see plot.py for what results-dir holds and what is drawn and printed).
# The pinned matplotlib (requirements.txt beside this) goes into a virtualenv
# of its own under the cache, made once per hash of that file and reused, so
# that drawing needs nothing of the system's Python but python3 -m venv.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "$#" -ne 2 ]; then
  echo "usage: bench/sustained/plot.sh <results-dir> <out.png>" >&2
  exit 2
fi
venv="${XDG_CACHE_HOME:-$HOME/.cache}/errand-bench/plot-venv"
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
# The venv's path is fixed (not per hash), so a changed pin replaces it.
if [ "$(cat "$venv/.ready" 2>/dev/null)" != "$want" ]; then
  echo "plot.sh: installing matplotlib into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" || { echo "plot.sh: python3 -m venv failed: apt-get install python3-venv" >&2; exit 1; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  # Written last: a venv whose install was interrupted is made again.
  echo "$want" >"$venv/.ready"
fi
exec "$venv/bin/python" "$here/plot.py" "$@"
