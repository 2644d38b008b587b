#!/usr/bin/env bash
# Device call 4: the solver example with its scalars made in the reductions' finals (new)
# against the example before the device scalars (old, e439d70), same library, alternating;
# then 20 outer steps of the new one.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f -k "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > $OUT/log.txt
for m in lap3d:100 fem:bracket.msh.gz:p1:refine=2:order=rcm fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled \
         fem:bracket.msh.gz:p1:refine=2:order=scrambled fem:pipe-tee.msh.gz:p2:refine=1:order=rcm lap3d:200; do
  for b in new old old new; do
    echo "## solve-$b: $m --steps 5 $(date +%T)" >> $OUT/solver.txt
    timeout 150 .gpu/bin/solve-$b $m --steps 5 >> $OUT/solver.txt 2>&1; echo "rc=$?" >> $OUT/solver.txt
  done
done
for m in lap3d:100 fem:bracket.msh.gz:p1:refine=2:order=rcm fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled \
         fem:bracket.msh.gz:p1:refine=2:order=scrambled fem:pipe-tee.msh.gz:p2:refine=1:order=rcm; do
  echo "## solve-new: $m --steps 20 $(date +%T)" >> $OUT/solver20.txt
  timeout 150 .gpu/bin/solve-new $m --steps 20 >> $OUT/solver20.txt 2>&1; echo "rc=$?" >> $OUT/solver20.txt
done
echo "== end $(date +%T)" >> $OUT/log.txt
