#!/usr/bin/env bash
# Call 3: the solver example with cuSPARSE's vector descriptors kept (solve-new) against
# HEAD's example (solve-old), 20 outer steps, alternating; then the reach audit's second
# part with HEAD's library: the graphs of 2-4M rows (csr-merge, auto, the peers), the
# validation suite (every runner; cuSPARSE's sliced ELL on the families without hub rows),
# and rmat-23, which call 2 ran out of time for.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes
CAL=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
for m in fem:bracket.msh.gz:p1:refine=2:order=rcm lap3d:100 fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled \
         fem:pipe-tee.msh.gz:p2:refine=1:order=rcm; do
  for b in new old; do
    echo "## solve-$b: $m --steps 20 $(date +%T)" >> $OUT/solver.txt
    KSPMV_CALIBRATION=$CAL timeout 60 .gpu/bin/solve-$b $m --steps 20 >> $OUT/solver.txt 2>&1; echo "rc=$?" >> $OUT/solver.txt
  done
done
echo "== solver done $(date +%T)" >> $OUT/log.txt
NOSELL=csr,kk-crs,dia,ell,csr-scalar,csr-vector,coo,hyb,pkt,ellr,pellr,jad,csr-adaptive,csr-merge,evc-hyb,ehyb,auto,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo
P=".gpu/bin/kspmv_perf-base --precision=double --calibration=$CAL"
timeout 100 $P --suite=perf_tests/suites/graphs.txt --formats=csr-merge,auto,kk-crs,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo \
  --samples=5 --csv=$OUT/audit-graphs.csv > /dev/null 2>&1
echo "graphs rc=$? $(date +%T)" >> $OUT/log.txt
timeout 200 $P --suite=perf_tests/suites/validation.txt --formats=$NOSELL --samples=3 --csv=$OUT/audit-validation.csv > /dev/null 2>&1
echo "validation rc=$? $(date +%T)" >> $OUT/log.txt
timeout 60 $P --suite=.gpu/validation-sell.txt --formats=cusparse-sell --samples=3 --csv=$OUT/audit-validation-sell.csv > /dev/null 2>&1
echo "validation sell rc=$? $(date +%T)" >> $OUT/log.txt
timeout 100 $P --suite=.gpu/large-rmat.txt --formats=$NOSELL --samples=3 --csv=$OUT/audit-large-rmat.csv > /dev/null 2>&1
echo "rmat rc=$? $(date +%T)" >> $OUT/log.txt
