# .gpu/solve-applies.sh
#!/usr/bin/env bash
# Device call: the solver example (1500371) with the library's default expected_applies and with --applies 100 (its solves take 46-146 iterations a refresh).
set -u
cd "$(dirname "$0")/.."
xz -d -f -k .gpu/bin/solve-new.xz; chmod +x .gpu/bin/solve-new
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
for m in fem:bracket.msh.gz:p1:refine=2:order=rcm fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled lap3d:100; do
  for a in "" "--applies 100" "--applies 100" ""; do
    echo "## solve-new: $m --steps 5 $a" >> $OUT/solver.txt
    timeout 120 .gpu/bin/solve-new $m --steps 5 $a >> $OUT/solver.txt 2>&1; echo "rc=$?" >> $OUT/solver.txt
  done
done
# .gpu/solve-applies2.sh
#!/usr/bin/env bash
# Device call: the solver example (1500371) with --applies 500, about the SpMVs of all five CG solves (one conversion, five refreshes).
set -u
cd "$(dirname "$0")/.."
xz -d -f -k .gpu/bin/solve-new.xz; chmod +x .gpu/bin/solve-new
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
for m in fem:bracket.msh.gz:p1:refine=2:order=rcm fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled; do
  for a in 1 2; do
    echo "## solve-new: $m --steps 5 --applies 500" >> $OUT/solver.txt
    timeout 120 .gpu/bin/solve-new $m --steps 5 --applies 500 >> $OUT/solver.txt 2>&1; echo "rc=$?" >> $OUT/solver.txt
  done
done
