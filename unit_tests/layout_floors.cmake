# The floors' include direction, checked on the sources (the build checks
# it too: each floor's target sees only the include folders below it).
#   core/ (ground floor, inputs, model) includes nothing from formats/,
#   backends/ or the run-time Matrix; backends/ and formats/ include
#   nothing from the run-time Matrix above them (formats/runtime).
# cmake -DROOT=<checkout> -P layout_floors.cmake
set(runtime_headers "kspmv/(matrix|calibrate|kspmv)[.]hpp")
set(bad "")
function(check_folder folder pattern)
  file(GLOB_RECURSE files ${ROOT}/${folder}/*.hpp ${ROOT}/${folder}/*.cpp ${ROOT}/${folder}/*.in)
  foreach(f ${files})
    if(f MATCHES "/formats/runtime/")
      continue()
    endif()
    file(STRINGS ${f} lines REGEX "^#include \"(${pattern})")
    foreach(l ${lines})
      set(bad "${bad}${f}: ${l}\n" PARENT_SCOPE)
    endforeach()
  endforeach()
endfunction()
check_folder(core "kspmv/formats/|kspmv/backends/|${runtime_headers}")
check_folder(backends "kspmv/formats/|${runtime_headers}")
check_folder(formats "${runtime_headers}")
if(bad)
  message(FATAL_ERROR "includes against the floors:\n${bad}")
endif()
message(STATUS "floors: every include goes down")
