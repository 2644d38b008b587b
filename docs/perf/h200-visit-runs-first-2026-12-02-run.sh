#!/usr/bin/env bash
# Call 1: visit_slots finding every run's entries first (new) against HEAD's library (base):
# pkt's refresh and evc-hyb's conversion; then the solver example with cuSPARSE's vector

set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes
CAL=perf_tests/calibration/nvidia-h200.cal
export KSPMV_CALIBRATION=$CAL
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
run() {  # binary suite tag
  echo "== $1 $2 $3 $(date +%T)" >> $OUT/log.txt
  timeout 150 .gpu/bin/kspmv_perf-$1 --suite=perf_tests/suites/$2.txt --formats=pkt,evc-hyb,cusparse-csr-alg1 \
    --samples=5 --precision=double --calibration=$CAL --csv=$OUT/visit-$2-$3-$1.csv > /dev/null 2>> $OUT/log.txt
  echo "rc=$?" >> $OUT/log.txt
}
run base fem a; run new fem a; run new setup-ab a; run base setup-ab a; run new fem b; run base fem b
echo "== end $(date +%T)" >> $OUT/log.txt
