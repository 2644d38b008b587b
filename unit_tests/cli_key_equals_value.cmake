# --key=value and --key value are the same option: spmv runs with every
# option given as --key=value, and info prints the same with either
# spelling. EXE: the kspmv program; DATA: unit_tests/data; WORK: scratch.
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/x.mtx "%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n")
execute_process(COMMAND ${EXE} spmv ${DATA}/small_general.mtx --format=kk-crs --reps=2 --precision=float
                --alpha=2 --beta=-1 --seed=7 --x=${WORK}/x.mtx --write-y=${WORK}/y_eq.mtx
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "format +kk-crs.*precision +float.*check +ok.*over 2 runs")
  message(FATAL_ERROR "spmv with --key=value options failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${EXE} spmv ${DATA}/small_general.mtx --format kk-crs --reps 2 --precision float
                --alpha 2 --beta -1 --seed 7 --x ${WORK}/x.mtx --write-y ${WORK}/y_space.mtx
                RESULT_VARIABLE rc)
file(READ ${WORK}/y_eq.mtx y_eq)
file(READ ${WORK}/y_space.mtx y_space)
if(NOT rc EQUAL 0 OR NOT y_eq STREQUAL y_space)
  message(FATAL_ERROR "spmv gave another y with --key value than with --key=value")
endif()

execute_process(COMMAND ${EXE} info ${DATA}/small_general.mtx --fractiles=4 --format=csr
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
execute_process(COMMAND ${EXE} info ${DATA}/small_general.mtx --fractiles 4 --format csr
                RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2)
if(NOT rc1 EQUAL 0 OR NOT out1 MATCHES "4-fractiles")
  message(FATAL_ERROR "info with --key=value options failed (${rc1}):\n${out1}${err1}")
endif()
# The conversion time differs between two runs; the rest must not.
string(REGEX REPLACE "conversion [0-9.]+ s" "conversion" out1 "${out1}")
string(REGEX REPLACE "conversion [0-9.]+ s" "conversion" out2 "${out2}")
if(NOT rc2 EQUAL 0 OR NOT out1 STREQUAL out2)
  message(FATAL_ERROR "info printed something else with --key value:\n${out1}\n----\n${out2}")
endif()
