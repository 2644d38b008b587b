#!/usr/bin/env bash
# ehyb's refresh, walk (rows) against scatter (map), forced by the lab binary's
# KSPMV_LAB_EHYB_REFRESH, on bands and block-diagonal rows whose rows stay in order.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
CAL=perf_tests/calibration/nvidia-h200.cal
P=".gpu/bin/kspmv_perf-lab --formats=ehyb --samples=3 --precision=double --calibration=$CAL"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
mkdir -p /tmp/csv
run() {  # group mode matrices limit
  export KSPMV_LAB_EHYB_REFRESH=$2
  timeout $4 $P --matrices=$3 --csv=/tmp/csv/$1-$2.csv >> $OUT/console.txt 2>&1
  echo "$1 $2 rc=$? $(date +%T)" >> $OUT/log.txt
  (cd /tmp/csv && tar -rf $OUT/csv.tar $1-$2.csv)
}
for g in ${GROUPS_TO_RUN:-b1 b4}; do
  case $g in
    b1) M=banded:1000000:6,banded:1000000:10,banded:1000000:12,banded:1000000:14,banded:1000000:16,banded:1000000:20,banded:1000000:24,banded:1000000:32; L=110;;
    b4) M=banded:4000000:8,banded:4000000:12,banded:4000000:16,banded:4000000:20; L=120;;
    bd) M=blockdiag:2000000:16,blockdiag:2000000:20,blockdiag:2000000:24,blockdiag:2000000:32,blockdiag:2000000:48,blockdiag:1000000:64,blockdiag:500000:24,banded:2000000:9,banded:8000000:11; L=150;;
    fl) M=banded:4000000:16,banded:1000000:6,blockdiag:2000000:24,banded:1000000:32; L=90; P="${P/--precision=double/--precision=float}";;
  esac
  run $g map $M $L
  run $g rows $M $L
done
