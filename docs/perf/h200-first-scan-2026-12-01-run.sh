#!/usr/bin/env bash
# Device call: the first-scan A/B. $1: which part (1: unit tests, first conversions, FEM suite; 2: set-up suite)
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f -k "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_SHARED_MATRICES=$PWD/.gpu/matrices
export KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $OUT/log.txt
P="--samples=5 --precision=double"
if [ "$1" = 1 ]; then
  # A process's first conversion: one matrix, one runner a process, base and new in turn.
  for m in fem:cube-sphere-hole.msh.gz:p1:refine=1:order=scrambled fem:pipe-tee.msh.gz:p1:refine=1:order=rcm fem:bracket.msh.gz:p1:refine=2:order=rcm banded:20000:32 lap3d:60; do
    for r in auto pellr ehyb; do
      for b in base new; do
        echo "== first $b $m $r $(date +%T)" >> $OUT/log.txt
        .gpu/bin/perf-$b --matrices=$m --formats=$r $P --csv=/tmp/one.csv >> $OUT/log.txt 2>&1
        if [ -e $OUT/first-$b.csv ]; then tail -n +2 /tmp/one.csv >> $OUT/first-$b.csv; else cp /tmp/one.csv $OUT/first-$b.csv; fi
        rm -f /tmp/one.csv
      done
    done
  done
  for b in new base; do
    echo "== fem $b $(date +%T)" >> $OUT/log.txt
    .gpu/bin/perf-$b --suite=.gpu/fem8.txt --formats=pellr,hyb,evc-hyb,ehyb,pkt,auto $P --csv=$OUT/fem-$b.csv >> $OUT/log.txt 2>&1
  done
else
  for b in base new; do
    echo "== fem2 $b $(date +%T)" >> $OUT/log.txt
    .gpu/bin/perf-$b --suite=.gpu/fem8.txt --formats=pellr,hyb,evc-hyb,ehyb,pkt,auto $P --csv=$OUT/fem2-$b.csv >> $OUT/log.txt 2>&1
  done
  for b in base new; do
    echo "== ab $b $(date +%T)" >> $OUT/log.txt
    .gpu/bin/perf-$b --suite=.gpu/ab-no-rmat.txt --formats=csr-adaptive,dia,ell,hyb,csr-merge,pkt,ehyb,auto $P --csv=$OUT/ab-$b.csv >> $OUT/log.txt 2>&1
  done
fi
echo "== end $(date +%T)" >> $OUT/log.txt
