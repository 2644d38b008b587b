#!/usr/bin/env bash
# Call 5: ehyb's refresh along its rows (its CUDA kernel) against the scatter through a
# slot map, on matrices whose rows mostly keep the CSR's order (where the rule picks the
# scatter): one lab binary, KSPMV_LAB_ROWS set = always by rows where no row is long.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes
CAL=perf_tests/calibration/nvidia-h200.cal
P=".gpu/bin/kspmv_perf-lab --formats=ehyb --samples=3 --precision=double --calibration=$CAL"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
for s in validation fem stencils; do
  case $s in
    validation) SRC=--suite=perf_tests/suites/validation.txt;;
    fem) SRC=--suite=perf_tests/suites/fem.txt;;
    stencils) SRC=--matrices=lap3d27:160,lap3d:200,lap3d27:100,lap2d:2000;;
  esac
  for v in map rows; do
    if [ $v = rows ]; then export KSPMV_LAB_ROWS=1; else unset KSPMV_LAB_ROWS; fi
    timeout 150 $P $SRC --csv=$OUT/$s-$v.csv >> $OUT/console.txt 2>&1
    echo "$s $v rc=$? $(date +%T)" >> $OUT/log.txt
  done
done
