# perf_tests/fit_setup.py on a small kspmv_perf CSV (data/setup_fit_sample.csv):
# the keys it fits (dia's three matrices on a line; the warm-up row, a
# refused row, peers, auto, a runner with options and a float row left
# out; a format under --min-points not fitted), then a calibration file
# with the keys appended, which
# `kspmv info --predict` reads: dia's set-up column moves from the default
# 2 ms to the fitted 1 ms. PYTHON, ROOT (the source tree), EXE (the kspmv
# program), CAL (a calibration file), WORK (a scratch folder).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${PYTHON} ${ROOT}/perf_tests/fit_setup.py --skip warm-up ${ROOT}/unit_tests/data/setup_fit_sample.csv
                RESULT_VARIABLE rc OUTPUT_VARIABLE keys ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fit_setup.py failed (${rc}): ${keys}${err}")
endif()
foreach(want "setup_us.dia = 1000.0" "setup_ns_per_nnz.dia = 0.1000" "refresh_spmvs.dia = 2.000"
             "# csr-merge: 2 matrices, not fitted")
  string(FIND "${keys}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "fit_setup.py did not print '${want}':\n${keys}")
  endif()
endforeach()
foreach(unwanted "kk-crs" ".auto" "cusparse" "setup_us.csr-merge" "max_fill" "dia: 4 matrices")
  string(FIND "${keys}" "${unwanted}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "fit_setup.py fitted a row it should leave out ('${unwanted}'):\n${keys}")
  endif()
endforeach()
file(READ ${CAL} cal)
file(WRITE ${WORK}/with_keys.cal "${cal}\n${keys}")
set(dia_setup "\ndia +[0-9.]+ +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +")
foreach(case "${CAL};2\\.00" "${WORK}/with_keys.cal;1\\.00")
  list(GET case 0 file)
  list(GET case 1 ms)
  execute_process(COMMAND ${EXE} info lap3d:8 --predict --calibration ${file}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${dia_setup}${ms} ")
    message(FATAL_ERROR "info --predict --calibration ${file}: dia's set-up is not ${ms} ms (${rc}):\n${out}${err}")
  endif()
endforeach()
