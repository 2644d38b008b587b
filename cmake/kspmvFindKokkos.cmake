# kspmv_find_kokkos(): make the targets Kokkos::kokkos and
# Kokkos::kokkoskernels exist, whichever way Kokkos is installed.
#
# 1. A proper Kokkos 4 or 5 install (GPU nodes): find_package(Kokkos CONFIG)
#    of major version 4, else 5 (asking for a version keeps Debian's broken
#    Kokkos 3.4 config out), and find_package(KokkosKernels CONFIG).
# 2. Debian's Trilinos 13.2 packages (Kokkos 3.4.01, Serial backend only),
#    whose own CMake config exports empty include directories and a target
#    named trilinos_kokkoskernels: wrap the headers in /usr/include/trilinos
#    and the trilinos_kokkos* libraries in imported targets ourselves.
#
# Sets KSPMV_KOKKOS_VERSION, KSPMV_KOKKOS_SOURCE, KSPMV_KOKKOS_BACKENDS,
# KSPMV_KOKKOS_HAS_CUDA and KSPMV_KOKKOSKERNELS_SOURCE.
macro(kspmv_find_kokkos)
  if(NOT TARGET Kokkos::kokkos)
    find_package(Kokkos 4 CONFIG QUIET)
  endif()
  if(NOT TARGET Kokkos::kokkos)
    find_package(Kokkos 5 CONFIG QUIET)
  endif()
  if(TARGET Kokkos::kokkos AND Kokkos_FOUND)
    set(KSPMV_KOKKOS_VERSION ${Kokkos_VERSION})
    set(KSPMV_KOKKOS_SOURCE "CMake config ${Kokkos_DIR}")
    set(KSPMV_KOKKOS_BACKENDS ${Kokkos_DEVICES})
    if(NOT TARGET Kokkos::kokkoskernels)
      find_package(KokkosKernels CONFIG REQUIRED)
    endif()
    set(KSPMV_KOKKOSKERNELS_SOURCE "CMake config ${KokkosKernels_DIR}")
  elseif(NOT TARGET Kokkos::kokkos)
    find_path(KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp
              PATH_SUFFIXES trilinos HINTS /usr/include)
    find_library(KSPMV_TRILINOS_KOKKOSCORE_LIB trilinos_kokkoscore)
    find_library(KSPMV_TRILINOS_KOKKOSCONTAINERS_LIB trilinos_kokkoscontainers)
    find_library(KSPMV_TRILINOS_KOKKOSKERNELS_LIB trilinos_kokkoskernels)
    if(NOT KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR OR NOT KSPMV_TRILINOS_KOKKOSCORE_LIB
       OR NOT KSPMV_TRILINOS_KOKKOSCONTAINERS_LIB OR NOT KSPMV_TRILINOS_KOKKOSKERNELS_LIB)
      message(FATAL_ERROR
        "kspmv: no Kokkos found. Either point CMake at a Kokkos 4 install "
        "(-DKokkos_ROOT=... -DKokkosKernels_ROOT=...) or install Debian's "
        "libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev (scripts/setup.sh does).")
    endif()
    file(STRINGS "${KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h"
         _kspmv_kv REGEX "#define KOKKOS_VERSION [0-9]+")
    string(REGEX MATCH "[0-9]+" _kspmv_kv "${_kspmv_kv}")
    math(EXPR _kspmv_major "${_kspmv_kv} / 10000")
    math(EXPR _kspmv_minor "${_kspmv_kv} / 100 % 100")
    math(EXPR _kspmv_patch "${_kspmv_kv} % 100")
    set(KSPMV_KOKKOS_VERSION "${_kspmv_major}.${_kspmv_minor}.${_kspmv_patch}")
    set(KSPMV_KOKKOS_BACKENDS "")
    foreach(_kspmv_be SERIAL OPENMP THREADS CUDA HIP)
      file(STRINGS "${KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h"
           _kspmv_def REGEX "^#define KOKKOS_ENABLE_${_kspmv_be}$")
      if(_kspmv_def)
        list(APPEND KSPMV_KOKKOS_BACKENDS ${_kspmv_be})
      endif()
    endforeach()
    add_library(Kokkos::kokkos INTERFACE IMPORTED)
    set_target_properties(Kokkos::kokkos PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES
        "${KSPMV_TRILINOS_KOKKOSCONTAINERS_LIB};${KSPMV_TRILINOS_KOKKOSCORE_LIB};${CMAKE_DL_LIBS}"
      INTERFACE_COMPILE_FEATURES cxx_std_17)
    add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
    set_target_properties(Kokkos::kokkoskernels PROPERTIES
      INTERFACE_LINK_LIBRARIES "${KSPMV_TRILINOS_KOKKOSKERNELS_LIB};Kokkos::kokkos")
    set(KSPMV_KOKKOS_SOURCE "Debian Trilinos packages, headers ${KSPMV_TRILINOS_KOKKOS_INCLUDE_DIR}")
    set(KSPMV_KOKKOSKERNELS_SOURCE "Debian Trilinos ${KSPMV_TRILINOS_KOKKOSKERNELS_LIB}")
  endif()
  if("CUDA" IN_LIST KSPMV_KOKKOS_BACKENDS)
    set(KSPMV_KOKKOS_HAS_CUDA ON)
  else()
    set(KSPMV_KOKKOS_HAS_CUDA OFF)
  endif()
endmacro()

# kspmv_check_kokkos(BUILT_VERSION BUILT_BACKENDS): a project using an
# installed kspmv must find the Kokkos kspmv was built with (its compiled
# kernels, View layouts and execution spaces come from it): the same
# version, and every backend kspmv was built for.
function(kspmv_check_kokkos built_version built_backends)
  if(NOT KSPMV_KOKKOS_VERSION VERSION_EQUAL built_version)
    message(FATAL_ERROR
      "kspmv was built with Kokkos ${built_version}, but this project found Kokkos "
      "${KSPMV_KOKKOS_VERSION} (${KSPMV_KOKKOS_SOURCE}). Point Kokkos_ROOT (and "
      "KokkosKernels_ROOT) at the installs kspmv was built with.")
  endif()
  foreach(be IN LISTS built_backends)
    list(FIND KSPMV_KOKKOS_BACKENDS "${be}" at)  # (IN_LIST needs a policy the caller may not set)
    if(at EQUAL -1)
      message(FATAL_ERROR
        "kspmv was built with Kokkos' ${be} backend; the Kokkos this project found "
        "(${KSPMV_KOKKOS_SOURCE}) has only: ${KSPMV_KOKKOS_BACKENDS}.")
    endif()
  endforeach()
endfunction()
