# Meshes one benchmark geometry with gmsh (coarse) and reads it through the
# fem: generator, P1 and P2: the .geo files and the reader stay in step.
# -DGMSH= -DEXE= -DGEO= -DOUT= -DH=
execute_process(COMMAND ${GMSH} -3 -format msh22 -setnumber h ${H} ${GEO} -o ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gmsh failed on ${GEO}:\n${log}")
endif()
foreach(element p1 p2)
  execute_process(COMMAND ${EXE} info fem:${OUT}:${element}:order=rcm
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "rows +[1-9]")
    message(FATAL_ERROR "kspmv info fem:${OUT}:${element} failed (${rc}):\n${out}\n${err}")
  endif()
endforeach()
