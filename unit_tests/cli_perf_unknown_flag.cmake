# kspmv_perf refuses a flag it does not know, naming it, before it runs
# anything (a misspelt flag used to be ignored and the default run went
# ahead); bad values and misspelt --benchmark_* flags are refused too, and
# so are a runner's unknown options and out-of-range values.
# PERF: the kspmv_perf program.
function(expect_refused expect)
  execute_process(COMMAND ${PERF} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  list(JOIN ARGN " " line)
  if(rc EQUAL 0)
    message(FATAL_ERROR "kspmv_perf ${line} was accepted:\n${out}${err}")
  endif()
  if(NOT err MATCHES "${expect}")
    message(FATAL_ERROR "kspmv_perf ${line}: the message does not match '${expect}':\n${err}")
  endif()
  if(out MATCHES "copy bandwidth")
    message(FATAL_ERROR "kspmv_perf ${line} started measuring although refused:\n${out}")
  endif()
endfunction()

expect_refused("unknown flag '--formt'" --formt=ell)
expect_refused("unknown flag '--formt'" --matrices=lap1d:10 --formt ell)
expect_refused("unexpected argument 'lap1d:10'" lap1d:10)
expect_refused("--samples: must be a positive integer, not 'many'" --matrices=lap1d:10 --samples=many)
expect_refused("--precision: half not in" --matrices=lap1d:10 --precision=half)
expect_refused("--calibrate: must be a number >= 0" --matrices=lap1d:10 --calibrate=-2)
expect_refused("unrecognized command-line flag: --benchmark_fitler=x" --matrices=lap1d:10 --benchmark_fitler=x)
expect_refused("unknown option 'expected_apples=20'" --matrices=lap1d:10 --formats=auto:expected_apples=20)
expect_refused("expected_applies: must be a number >= 0, not '-5'" --matrices=lap1d:10 --formats=auto:expected_applies=-5)
expect_refused("auto_candidates: must be an integer >= 1, not '0'" --matrices=lap1d:10 --formats=csr,auto:auto_candidates=0)
expect_refused("auto_sample_entries: must be an integer >= 0, not '1.5'" --matrices=lap1d:10 --formats=auto:auto_sample_entries=1.5)
expect_refused("unknown format" --matrices=lap1d:10 --formats=csr,notaformat)
expect_refused("max_fill: must be a number, not 'abc'" --matrices=lap1d:10 --formats=ell:max_fill=abc)
expect_refused("evc_split: must be an integer in" --matrices=lap1d:10 --formats=evc-hyb:evc_split=1e12)
