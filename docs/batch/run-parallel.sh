#!/usr/bin/env bash
# One manifest on one machine with GNU parallel: four shards at once, two jobs each.
# Each shard writes its own results file beside the manifest; rerunning the same line
# skips what is done. MIXDOWN may name the binary (default: mixdown on PATH).
# Usage: run-parallel.sh MANIFEST [SHARDS]
set -euo pipefail
manifest="$1"
shards="${2:-4}"
mixdown="${MIXDOWN:-mixdown}"
seq 0 $((shards - 1)) | parallel --line-buffer --halt never \
  "$mixdown" batch "$manifest" --shard "{}/$shards" --jobs 2 --quiet
