# kspmv_find_metis(): METIS (Debian libmetis-dev) for graph partitioning.
# KSPMV_ENABLE_METIS: ON (required), OFF (never), AUTO (use when found).
# Sets KSPMV_HAVE_METIS and, when found, the target kspmv_metis::metis.
macro(kspmv_find_metis)
  set(KSPMV_HAVE_METIS OFF)
  if(NOT DEFINED KSPMV_ENABLE_METIS)
    set(KSPMV_ENABLE_METIS AUTO)
  endif()
  if(KSPMV_ENABLE_METIS)  # ON and AUTO are both true in CMake's sense
    find_path(KSPMV_METIS_INCLUDE_DIR metis.h)
    find_library(KSPMV_METIS_LIBRARY metis)
    if(KSPMV_METIS_INCLUDE_DIR AND KSPMV_METIS_LIBRARY)
      set(KSPMV_HAVE_METIS ON)
      if(NOT TARGET kspmv_metis::metis)
        add_library(kspmv_metis::metis UNKNOWN IMPORTED)
        set_target_properties(kspmv_metis::metis PROPERTIES
          IMPORTED_LOCATION "${KSPMV_METIS_LIBRARY}"
          INTERFACE_INCLUDE_DIRECTORIES "${KSPMV_METIS_INCLUDE_DIR}")
      endif()
    elseif(KSPMV_ENABLE_METIS STREQUAL "ON")
      message(FATAL_ERROR "KSPMV_ENABLE_METIS=ON but metis.h / libmetis were not found (Debian: libmetis-dev)")
    endif()
  endif()
endmacro()
