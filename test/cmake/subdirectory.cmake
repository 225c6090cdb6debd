# cmake -P: configure the parent project, then build its one target.
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}/test/cmake/parent" -B "${WORK}"
                        -G "${GENERATOR}" -DFUSEC_SOURCE_DIR=${SOURCE} -DCUDAToolkit_ROOT=${CUDA_ROOT}
                RESULT_VARIABLE configured)
if(NOT configured EQUAL 0)
  message(FATAL_ERROR "configuring a project with fusec as its subdirectory failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK}" --target parent_uses_fusec
                RESULT_VARIABLE built)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "compiling against fusec's header from a parent project failed")
endif()
