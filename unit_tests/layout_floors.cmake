# The floors' include direction, checked on the sources (the build checks
# it too: each floor's target sees only the include folders below it).
#   core/ (ground floor, inputs, model) includes nothing from formats/,
#   backends/ or the run-time Matrix; backends/ and formats/ include
#   nothing from the run-time Matrix above them (formats/runtime); and
#   nothing below the PETSc adapter (formats/runtime/petsc, the top
#   floor) includes it: not even the run-time Matrix.
# cmake -DROOT=<checkout> -P layout_floors.cmake
set(runtime_headers "kspmv/(matrix|calibrate|kspmv)[.]hpp")
set(petsc_headers "kspmv/petsc/")
set(bad "")
# check_folder(folder pattern [skip]): no file under folder (except those
# whose path matches skip) includes a header matching pattern.
function(check_folder folder pattern)
  set(skip "${ARGV2}")
  if(NOT skip)
    set(skip "/formats/runtime/")
  endif()
  file(GLOB_RECURSE files ${ROOT}/${folder}/*.hpp ${ROOT}/${folder}/*.cpp ${ROOT}/${folder}/*.in)
  foreach(f ${files})
    if(f MATCHES "${skip}")
      continue()
    endif()
    file(STRINGS ${f} lines REGEX "^#include \"(${pattern})")
    foreach(l ${lines})
      set(bad "${bad}${f}: ${l}\n" PARENT_SCOPE)
    endforeach()
  endforeach()
endfunction()
check_folder(core "kspmv/formats/|kspmv/backends/|${runtime_headers}|${petsc_headers}")
check_folder(backends "kspmv/formats/|${runtime_headers}|${petsc_headers}")
check_folder(formats "${runtime_headers}|${petsc_headers}")
check_folder(formats/runtime "${petsc_headers}" "/formats/runtime/petsc/")
if(bad)
  message(FATAL_ERROR "includes against the floors:\n${bad}")
endif()
message(STATUS "floors: every include goes down")
