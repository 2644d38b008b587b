#!/usr/bin/env bash
# Call 6: the lab binary (KSPMV_LAB_ROWS set = ehyb refreshed along its rows where no row
# is long) on stencils and bands the rule's threshold was not read from.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
CAL=perf_tests/calibration/nvidia-h200.cal
P=".gpu/bin/kspmv_perf-lab --formats=ehyb --samples=3 --precision=double --calibration=$CAL"
M=lap3d:120,lap3d:160,lap3d27:128,lap3d27:190,lap2d9:3000,lap2d:1000,banded:4000000:16,blockdiag:4000000:8
for v in map rows map rows; do
  n=$((${n:-0}+1))
  if [ $v = rows ]; then export KSPMV_LAB_ROWS=1; else unset KSPMV_LAB_ROWS; fi
  timeout 130 $P --matrices=$M --csv=$OUT/unseen-$n-$v.csv >> $OUT/console.txt 2>&1
  echo "unseen $n $v rc=$? $(date +%T)" >> $OUT/log.txt
done
