#!/usr/bin/env bash
# What sealing the local backend's files costs an export (issue 44):
#   bench/seal_files.sh [rows=1000000] [pairs=3] [format=csv]
# The same export with storage.seal_files off (A) and on (B): bench/export_ab.sh.
exec env EXPORT_ENV_A=ERRAND_STORAGE__SEAL_FILES=false EXPORT_ENV_B=ERRAND_STORAGE__SEAL_FILES=true \
  "$(dirname "$0")/export_ab.sh" "$@"
