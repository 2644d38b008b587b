#!/usr/bin/env bash
# The large suite, every runner, HEAD's binary: #25's reaches in one run.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
CAL=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
ALL=csr,kk-crs,dia,ell,csr-scalar,csr-vector,coo,hyb,pkt,ellr,pellr,jad,csr-adaptive,csr-merge,evc-hyb,ehyb,auto,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo,cusparse-sell
timeout 520 .gpu/bin/kspmv_perf-new --suite=perf_tests/suites/large.txt --formats=$ALL --samples=3 \
  --precision=double --calibration=$CAL --csv=$OUT/audit-large.csv > $OUT/audit-large.txt 2>&1
echo "rc=$? $(date +%T)" >> $OUT/log.txt
