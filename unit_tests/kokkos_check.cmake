# kspmv_check_kokkos (cmake/kspmvFindKokkos.cmake), as find_package(kspmv)
# runs it: FOUND_VERSION / FOUND_BACKENDS stand for what the project found,
# BUILT_VERSION / BUILT_BACKENDS for what kspmv was built with. A mismatch
# must stop configuration (the tests of a mismatch are marked WILL_FAIL).
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/kspmvFindKokkos.cmake)
set(KSPMV_KOKKOS_VERSION ${FOUND_VERSION})
set(KSPMV_KOKKOS_BACKENDS ${FOUND_BACKENDS})
set(KSPMV_KOKKOS_SOURCE "test")
kspmv_check_kokkos("${BUILT_VERSION}" "${BUILT_BACKENDS}")
message(STATUS "Kokkos ${FOUND_VERSION} (${FOUND_BACKENDS}) accepted for ${BUILT_VERSION} (${BUILT_BACKENDS})")
