# kspmv_find_petsc(): PETSc (through pkg-config: PETSc.pc or petsc.pc, as
# Debian's petsc-dev installs them) and the MPI it was built with
# (find_package(MPI)), for the PETSc adapter kspmv::petsc.
#
# KSPMV_ENABLE_PETSC: ON (required: a configure error names what is
# missing), OFF (never), AUTO (use when both are found).
#
# Sets KSPMV_HAVE_PETSC, KSPMV_PETSC_STATUS (one line for the configure
# summary) and, when found, the target kspmv_deps::petsc (PETSc's headers
# and library, and MPI, whose C interface PETSc's headers include).
macro(kspmv_find_petsc)
  set(KSPMV_HAVE_PETSC OFF)
  if(NOT DEFINED KSPMV_ENABLE_PETSC)
    set(KSPMV_ENABLE_PETSC AUTO)
  endif()
  if(NOT KSPMV_ENABLE_PETSC)  # OFF (AUTO and ON are both true in CMake's sense)
    set(KSPMV_PETSC_STATUS "not asked for")
  else()
    set(_kspmv_petsc_missing "")
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_search_module(KSPMV_PETSC QUIET PETSc petsc)
    endif()
    if(NOT KSPMV_PETSC_FOUND)
      list(APPEND _kspmv_petsc_missing "PETSc (no PETSc.pc or petsc.pc through pkg-config, Debian: petsc-dev)")
    endif()
    # MPI's C interface, seen from C++ (PETSc is a C library; the MPI C++
    # bindings are not wanted).
    set(MPI_CXX_SKIP_MPICXX ON)
    find_package(MPI QUIET COMPONENTS CXX)
    if(NOT MPI_CXX_FOUND)
      list(APPEND _kspmv_petsc_missing "MPI (find_package(MPI), Debian: libopenmpi-dev openmpi-bin)")
    endif()
    if(_kspmv_petsc_missing)
      list(JOIN _kspmv_petsc_missing " and " _kspmv_petsc_missing)
      if(KSPMV_ENABLE_PETSC STREQUAL "ON")
        message(FATAL_ERROR "KSPMV_ENABLE_PETSC=ON but not found: ${_kspmv_petsc_missing}")
      endif()
      set(KSPMV_PETSC_STATUS "not found: ${_kspmv_petsc_missing}")
    else()
      set(KSPMV_HAVE_PETSC ON)
      # A static PETSc (libpetsc.a) brings its own dependencies to the link:
      # the libraries its .pc lists as private (Libs.private: BLAS/LAPACK,
      # Kokkos and Kokkos Kernels, CUDA's runtime and math libraries...).
      kspmv_petsc_static_libs(_kspmv_petsc_libs)
      if(_kspmv_petsc_libs)
        set(KSPMV_PETSC_LINK_LIBRARIES ${_kspmv_petsc_libs})
        set(_kspmv_petsc_kind "static, with its private libraries")
      else()
        set(_kspmv_petsc_kind "shared")
      endif()
      set(KSPMV_PETSC_STATUS "PETSc ${KSPMV_PETSC_VERSION}, ${_kspmv_petsc_kind} (${KSPMV_PETSC_LINK_LIBRARIES}), MPI ${MPI_CXX_VERSION} (${MPIEXEC_EXECUTABLE})")
      if(NOT TARGET kspmv_deps::petsc)
        # Our own imported target rather than pkg-config's: PETSc's .pc adds
        # Debian's hardening flags (-D_FORTIFY_SOURCE=2), which warn in
        # unoptimised builds and are not PETSc's to impose.
        add_library(kspmv_deps::petsc INTERFACE IMPORTED)
        set_target_properties(kspmv_deps::petsc PROPERTIES
          INTERFACE_INCLUDE_DIRECTORIES "${KSPMV_PETSC_INCLUDE_DIRS}"
          INTERFACE_LINK_LIBRARIES "${KSPMV_PETSC_LINK_LIBRARIES};MPI::MPI_CXX")
      endif()
    endif()
  endif()
endmacro()

# kspmv_mpiexec_flags(VAR): flags for running the MPI tests and examples on
# a small machine: Open MPI needs --oversubscribe to start more ranks than
# cores (CI has 2). Sets VAR to the flags (empty for other MPIs) and
# KSPMV_MPIEXEC_ENV to the environment the runs need: Open MPI refuses to
# run as root (as CI's containers do) without the first two, and its
# shared-memory transport's single-copy path (CMA) fails in containers
# that forbid ptrace, so copy-in/copy-out it is.
function(kspmv_mpiexec_flags var)
  set(flags "")
  set(env "")
  if(MPIEXEC_EXECUTABLE)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE out ERROR_VARIABLE out
                    RESULT_VARIABLE rc TIMEOUT 30)
    if(out MATCHES "Open MPI|OpenRTE")
      set(flags --oversubscribe)
      set(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none)
    endif()
  endif()
  set(${var} ${flags} PARENT_SCOPE)
  set(KSPMV_MPIEXEC_ENV ${env} PARENT_SCOPE)
endfunction()

# kspmv_petsc_static_libs(VAR): when the PETSc found by pkg-config
# (KSPMV_PETSC_*) is a static library, VAR is what linking it takes:
# libpetsc.a, then every library of `pkg-config --static --libs PETSc`
# after it (Libs.private), each resolved to a file in the .pc's library
# folders (so a folder holding only static archives, such as a static
# BLAS/LAPACK, gives the archives) or left as a plain name for the
# compiler's own folders (m, stdc++). Empty for a shared PETSc (Debian's),
# whose library brings its dependencies itself. PETSc says which it is in
# petscconf.h (PETSC_USE_SHARED_LIBRARIES).
function(kspmv_petsc_static_libs var)
  set(${var} "" PARENT_SCOPE)
  # (Found into temporary cache entries, dropped at once: NO_CACHE needs CMake 3.21.)
  find_file(_kspmv_petscconf petscconf.h PATHS ${KSPMV_PETSC_INCLUDE_DIRS} NO_DEFAULT_PATH)
  set(conf "${_kspmv_petscconf}")
  unset(_kspmv_petscconf CACHE)
  if(NOT conf)
    return()
  endif()
  file(STRINGS "${conf}" _shared REGEX "^#define PETSC_USE_SHARED_LIBRARIES")
  if(_shared)
    return()
  endif()
  set(libs "")
  set(dirs ${KSPMV_PETSC_STATIC_LIBRARY_DIRS} ${KSPMV_PETSC_LIBRARY_DIRS})
  list(REMOVE_DUPLICATES dirs)
  foreach(name IN LISTS KSPMV_PETSC_STATIC_LIBRARIES)
    if(name STREQUAL "petsc")
      set(_names libpetsc.a)
    else()
      set(_names ${name})
    endif()
    find_library(_kspmv_lib NAMES ${_names} PATHS ${dirs} NO_DEFAULT_PATH)
    set(lib "${_kspmv_lib}")
    unset(_kspmv_lib CACHE)
    if(lib)
      list(APPEND libs "${lib}")
    elseif(name STREQUAL "petsc")
      message(WARNING "kspmv: PETSc is static (no PETSC_USE_SHARED_LIBRARIES) but libpetsc.a is not in ${dirs}")
      return()
    else()
      list(APPEND libs "${name}")
    endif()
  endforeach()
  # Options other than -l/-L in the static flags (-pthread, -fopenmp...).
  foreach(flag IN LISTS KSPMV_PETSC_STATIC_LDFLAGS_OTHER)
    list(APPEND libs "${flag}")
  endforeach()
  set(${var} ${libs} PARENT_SCOPE)
endfunction()
