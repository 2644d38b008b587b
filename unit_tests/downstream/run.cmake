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
execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build failed:\n${out}\n${err}")
endif()
separate_arguments(program_args UNIX_COMMAND "${PROGRAM_ARGS}")
execute_process(COMMAND ${WORK_DIR}/build/${PROGRAM} ${program_args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM} failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${out}")

if(EXAMPLE_DIR)
  list(REMOVE_ITEM args -S ${SOURCE_DIR} -B ${WORK_DIR}/build)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/example ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure of the PETSc example failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/example RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "build of the PETSc example failed:\n${out}\n${err}")
  endif()
  separate_arguments(mpiexec UNIX_COMMAND "${MPIEXEC}")
  execute_process(COMMAND ${mpiexec} ${WORK_DIR}/example/petsc_ksp -n 6 -fem_refine 0 -mults 2
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "check: ok")
    message(FATAL_ERROR "the PETSc example failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "PETSc example built against the install and run: check ok")
endif()
