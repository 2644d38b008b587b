# Installs the kspmv build into a scratch prefix, then configures, builds
# and runs a project against it with find_package(kspmv): the downstream
# test's, or an example's (PROGRAM, its PROGRAM_ARGS as one command-line
# string, and the EXPECT regex its output must match); with EXAMPLE_DIR
# (kspmv built with PETSc), the PETSc example too, with
# find_package(kspmv COMPONENTS petsc), run on two ranks through MPIEXEC.
if(NOT PROGRAM)
  set(PROGRAM downstream)
endif()
if(NOT DEFINED EXPECT)
  set(EXPECT "downstream ok")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${KSPMV_BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()
set(prefixes ${WORK_DIR}/prefix ${PREFIX_PATH})
set(args -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
         "-DCMAKE_PREFIX_PATH=${prefixes}")
if(KOKKOS_ROOT)
  list(APPEND args -DKokkos_ROOT=${KOKKOS_ROOT})
endif()
if(KOKKOSKERNELS_ROOT)
  list(APPEND args -DKokkosKernels_ROOT=${KOKKOSKERNELS_ROOT})
endif()
# Configures SOURCE into BUILD with the install's prefixes, builds it and
# runs BUILD/PROGRAM with ARGS (a list) under LAUNCHER (a list, may be
# empty); its output must match EXPECT. WHAT names it in failures.
function(build_and_run what source build launcher program args expect)
  set(cfg ${configure_args})
  list(REMOVE_ITEM cfg -S ${SOURCE_DIR} -B ${WORK_DIR}/build)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${source} -B ${build} ${cfg}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure of ${what} failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "build of ${what} failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${launcher} ${build}/${program} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expect}")
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

set(configure_args ${args})
separate_arguments(program_args UNIX_COMMAND "${PROGRAM_ARGS}")
build_and_run(${PROGRAM} ${SOURCE_DIR} ${WORK_DIR}/build "" ${PROGRAM} "${program_args}" "${EXPECT}")

if(EXAMPLE_DIR)
  separate_arguments(mpiexec UNIX_COMMAND "${MPIEXEC}")
  build_and_run("the PETSc example" ${EXAMPLE_DIR} ${WORK_DIR}/example "${mpiexec}" petsc_ksp
                "-n;6;-fem_refine;0;-mults;2" "check: ok")
endif()
