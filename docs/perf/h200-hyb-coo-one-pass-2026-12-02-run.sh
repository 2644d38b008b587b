#!/usr/bin/env bash
# Call 4: HYB's COO part written in one pass (new) against 9a99f72's library (base):
# conversion and refresh of hyb, coo, ell on the FEM suite, alternating twice; then the
# new binary's ehyb on the two large stencils with its refresh path and row order printed.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes
CAL=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
for b in new base new base; do
  n=$((${n:-0}+1))
  timeout 90 .gpu/bin/kspmv_perf-$b --suite=perf_tests/suites/fem.txt --formats=csr,hyb,coo,ell,hyb:hyb_k=0 --samples=3 \
    --precision=double --calibration=$CAL --csv=$OUT/fem-$n-$b.csv > $OUT/fem-$n-$b.txt 2>&1
  echo "fem $n $b rc=$? $(date +%T)" >> $OUT/log.txt
done
timeout 150 .gpu/bin/kspmv_perf-new --matrices=lap3d27:160,lap3d:200 --formats=ehyb,csr --samples=3 \
  --precision=double --calibration=$CAL --csv=$OUT/stencils-new.csv > $OUT/stencils-new.txt 2>&1
echo "stencils rc=$? $(date +%T)" >> $OUT/log.txt
