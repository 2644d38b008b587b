# .gpu/solve-ab.sh
#!/usr/bin/env bash
# Device call: the solver example, 09a35c7 (base) against 1500371 (new), each matrix in both orders.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f -k "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
for m in fem:bracket.msh.gz:p1:refine=2:order=rcm fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled; do
  for b in new base base new; do
    echo "## solve-$b: $m --steps 5" >> $OUT/solver.txt
    timeout 120 .gpu/bin/solve-$b $m --steps 5 >> $OUT/solver.txt 2>&1; echo "rc=$?" >> $OUT/solver.txt
  done
done
