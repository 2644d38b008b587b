# --x FILE in, --write-y FILE out: y must equal A*x computed independently
# here (small_general.mtx with x = 1..5), and `convert` must round-trip.
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/x.mtx "%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n")
execute_process(COMMAND ${EXE} spmv ${DATA}/small_general.mtx --format csr --x ${WORK}/x.mtx
                --write-y ${WORK}/y.mtx --reps 1 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spmv failed (${rc}): ${out} ${err}")
endif()
file(STRINGS ${WORK}/y.mtx lines)
# A*x: row1 4*1-1*2 = 2, row2 4*2 = 8, row3 0, row4 -0.5, row5 1+4+12+20 = 37
list(SUBLIST lines 2 5 values)
if(NOT "${values}" STREQUAL "2;8;0;-0.5;37")
  message(FATAL_ERROR "y is ${values}, expected 2;8;0;-0.5;37")
endif()
execute_process(COMMAND ${EXE} convert ${DATA}/small_general.mtx ${WORK}/copy.mtx.gz RESULT_VARIABLE rc)
execute_process(COMMAND ${EXE} spmv ${WORK}/copy.mtx.gz --format kk-crs --x ${WORK}/x.mtx
                --write-y ${WORK}/y2.mtx --reps 1 RESULT_VARIABLE rc2)
file(STRINGS ${WORK}/y2.mtx lines2)
if(NOT rc EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT "${lines}" STREQUAL "${lines2}")
  message(FATAL_ERROR "convert round trip changed the result")
endif()
# A wrong-length x is refused.
file(WRITE ${WORK}/x4.mtx "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4\n")
execute_process(COMMAND ${EXE} spmv ${DATA}/small_general.mtx --format csr --x ${WORK}/x4.mtx
                RESULT_VARIABLE rc3 ERROR_VARIABLE err3)
if(rc3 EQUAL 0 OR NOT err3 MATCHES "x has 4 entries")
  message(FATAL_ERROR "wrong-length x accepted: ${err3}")
endif()
