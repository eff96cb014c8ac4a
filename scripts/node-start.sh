#!/usr/bin/env bash
# Prints the median wall time, in milliseconds, of 9 `node -e 0` starts: the yardstick
# `npm test`'s wall time is compared with (npm test ≤ 1,500× a bare node start).
set -u
for _ in 1 2 3 4 5 6 7 8 9; do
  a=$(date +%s%N)
  node -e 0
  b=$(date +%s%N)
  echo $(((b - a) / 1000))
done | sort -n | sed -n 5p | awk '{ printf "%.1f\n", $1 / 1000 }'
