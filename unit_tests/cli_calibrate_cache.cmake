# kspmv calibrate without --out writes the user's cache entry for this
# device ($XDG_CACHE_HOME/kspmv/<device key>.cal), and info --predict then
# reports reading it from the cache. EXE: the kspmv program; WORK: a
# scratch folder that stands in for the cache home.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENV{XDG_CACHE_HOME} ${WORK})
unset(ENV{KSPMV_CALIBRATION})
execute_process(COMMAND ${EXE} calibrate --scale 0.0002 --budget 20
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate failed (${rc}): ${out}${err}")
endif()
file(GLOB written ${WORK}/kspmv/*.cal)
list(LENGTH written n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one cache entry under ${WORK}/kspmv, found '${written}'; output: ${out}")
endif()
if(NOT out MATCHES "wrote ${written}: auto finds it there")
  message(FATAL_ERROR "calibrate did not name the cache entry it wrote: ${out}")
endif()
execute_process(COMMAND ${EXE} info lap2d:30 --predict RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "calibration +user cache ${written}")
  message(FATAL_ERROR "info --predict did not read the cache entry (${rc}): ${out}${err}")
endif()
# A corrupt entry is an error naming the file, not silently ignored.
file(WRITE ${written} "name = x\nbandwidth_gbs = fast\n")
execute_process(COMMAND ${EXE} info lap2d:30 --predict RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "${written}")
  message(FATAL_ERROR "a corrupt cache entry was not reported (${rc}): ${out}${err}")
endif()
