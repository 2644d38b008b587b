# .gpu/scan-ab2.sh
#!/usr/bin/env bash
# Device call: detail::scan as two kernel types and callers' sets (new) against 1500371 (base).
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f -k "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_SHARED_MATRICES=$PWD/.gpu/matrices
export KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $OUT/log.txt
P="--samples=5 --precision=double"
[ -x .gpu/bin/ut ] && { .gpu/bin/ut --gtest_filter='DeviceScan.*' > $OUT/unit-tests.txt 2>&1; echo "rc=$?" >> $OUT/unit-tests.txt; }
B=(scan1 scan2)
for b in scan1 scan2; do
  KOKKOS_TOOLS_LIBS=$PWD/.gpu/bin/libtimeline.so TIMELINE_OUT=$OUT/tl-$b.txt .gpu/bin/perf-$b --matrices=fem:pipe-tee.msh.gz:p2:refine=1:order=scrambled $P --formats=pellr,hyb,evc-hyb,ehyb,pkt --csv=$OUT/tl-$b.csv >> $OUT/log.txt 2>&1
done
for m in fem:cube-sphere-hole.msh.gz:p1:refine=1:order=scrambled fem:pipe-tee.msh.gz:p1:refine=1:order=rcm fem:bracket.msh.gz:p1:refine=2:order=rcm banded:20000:32 lap3d:60; do
  for r in auto pellr ehyb; do
    for b in scan1 scan2; do
      echo "== first $b $m $r $(date +%T)" >> $OUT/log.txt
      .gpu/bin/perf-$b --matrices=$m --formats=$r $P --csv=/tmp/one.csv >> $OUT/log.txt 2>&1
      if [ -e $OUT/first-$b.csv ]; then tail -n +2 /tmp/one.csv >> $OUT/first-$b.csv; else cp /tmp/one.csv $OUT/first-$b.csv; fi
      rm -f /tmp/one.csv
    done
  done
done
for b in scan2 scan1; do
  echo "== fem $b $(date +%T)" >> $OUT/log.txt
  .gpu/bin/perf-$b --suite=.gpu/fem8.txt --formats=pellr,hyb,evc-hyb,ehyb,pkt,auto $P --csv=$OUT/fem-$b.csv >> $OUT/log.txt 2>&1
done
for b in scan1 scan2; do
  echo "== fem2 $b $(date +%T)" >> $OUT/log.txt
  .gpu/bin/perf-$b --suite=.gpu/fem8.txt --formats=pellr,hyb,evc-hyb,ehyb,pkt,auto $P --csv=$OUT/fem2-$b.csv >> $OUT/log.txt 2>&1
done
for b in scan1 scan2; do
  echo "== ab $b $(date +%T)" >> $OUT/log.txt
  .gpu/bin/perf-$b --suite=.gpu/ab-no-rmat.txt --formats=csr-adaptive,dia,ell,hyb,csr-merge,pkt,ehyb,auto $P --csv=$OUT/ab-$b.csv >> $OUT/log.txt 2>&1
done
echo "== end $(date +%T)" >> $OUT/log.txt

# .gpu/scan-tl.sh
#!/usr/bin/env bash
# Device call: unit tests of detail::scan and timelines of ehyb and pellr, 1500371 (scan1) and the two-kernel scan (scan2); one tar back.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f -k "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
export KSPMV_MESH_DIR=$PWD/.gpu/meshes KSPMV_SHARED_MATRICES=$PWD/.gpu/matrices
export KSPMV_CALIBRATION=perf_tests/calibration/nvidia-h200.cal
W=/tmp/w; mkdir -p $W
.gpu/bin/ut --gtest_filter='DeviceScan.*' > $W/unit-tests.txt 2>&1; echo "rc=$?" >> $W/unit-tests.txt
i=0
for m in rcm scrambled; do for b in scan1 scan2 scan2 scan1; do i=$((i+1))
  KOKKOS_TOOLS_LIBS=$PWD/.gpu/bin/libtimeline.so TIMELINE_OUT=$W/tl-$i-$b-$m.txt .gpu/bin/perf-$b --matrices=fem:pipe-tee.msh.gz:p2:refine=1:order=$m --samples=5 --precision=double --formats=pellr,ehyb,pkt --csv=$W/tl-$i-$b-$m.csv >> $W/log.txt 2>&1
  tar -C $W -cf $OUT/all.tar .
done; done
