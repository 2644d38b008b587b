#!/usr/bin/env bash
# The committed rule's binary (new) on the sweep's matrices, no environment variable;
# then the CUDA refresh unit tests; then new against the lab binary with no variable
# set (65cc509's rule) on the validation suite, ehyb only.
set -u
cd "$(dirname "$0")/.."
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x .gpu/bin/* 2>/dev/null
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib
unset KSPMV_LAB_EHYB_REFRESH
CAL=perf_tests/calibration/nvidia-h200.cal
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/log.txt
mkdir -p /tmp/csv
run() {  # name binary precision matrices-or-suite limit
  timeout $5 .gpu/bin/kspmv_perf-$2 --formats=ehyb --samples=3 --precision=$3 --calibration=$CAL $4 --csv=/tmp/csv/$1.csv >> $OUT/console.txt 2>&1
  echo "$1 rc=$? $(date +%T)" >> $OUT/log.txt
  (cd /tmp/csv && tar -rf $OUT/csv.tar $1.csv)
}
B1=banded:1000000:6,banded:1000000:10,banded:1000000:12,banded:1000000:14,banded:1000000:16,banded:1000000:20,banded:1000000:24,banded:1000000:32
B4=banded:4000000:8,banded:4000000:12,banded:4000000:16,banded:4000000:20
BD=blockdiag:2000000:16,blockdiag:2000000:20,blockdiag:2000000:24,blockdiag:2000000:32,blockdiag:2000000:48,blockdiag:1000000:64,blockdiag:500000:24,banded:2000000:9,banded:8000000:11
FL=banded:4000000:16,banded:1000000:6,blockdiag:2000000:24,banded:1000000:32
run final-b1 new double --matrices=$B1 110
run final-b4 new double --matrices=$B4 120
run final-bd new double --matrices=$BD 150
run final-fl new float --matrices=$FL 90
timeout 240 .gpu/bin/refresh_tests > $OUT/refresh_tests.txt 2>&1; echo "refresh_tests rc=$? $(date +%T)" >> $OUT/log.txt
run validation-new new double --suite=perf_tests/suites/validation.txt 120
run validation-base lab double --suite=perf_tests/suites/validation.txt 120
