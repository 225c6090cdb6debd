# cmake -P: install, build the host application against the install, run it.
file(REMOVE_RECURSE "${WORK}")
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
foreach(f include/fusec/fusec.h include/fusec/Tensor.h include/fusec/Runtime.h
          lib/libfusec_runtime.so lib/cmake/fusec/fusecConfig.cmake
          lib/pkgconfig/fusec.pc bin/fusec)
  if(NOT EXISTS "${WORK}/prefix/${f}")
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()
run("configuring examples/host-app" ${CMAKE_COMMAND} -S "${SOURCE}/examples/host-app"
    -B "${WORK}/host" -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run("building examples/host-app" ${CMAKE_COMMAND} --build "${WORK}/host")
run("host-app" "${WORK}/host/host-app" "${SOURCE}/examples/softmax.json")
if(NOT last_output MATCHES "reference: 1 output")
  message(FATAL_ERROR "host-app did not evaluate the graph")
endif()
run("ldd" ldd "${WORK}/host/host-app")
if(last_output MATCHES "libLLVM|libMLIR|not found")
  message(FATAL_ERROR "host-app needs a library it should not:\n${last_output}")
endif()

# The runtime alone: an artifact compiled by the installed CLI, loaded by an
# application linked with fusec::runtime, which carries no compiler.
run("fusec compile -o" "${WORK}/prefix/bin/fusec" compile "${SOURCE}/examples/softmax.json"
    -o "${WORK}/softmax.fusec" --arch sm_90a,sm_80)
run("run-artifact" "${WORK}/host/run-artifact" "${WORK}/softmax.fusec")
if(NOT last_output MATCHES "the artifact was read and checked|output .*elements")
  message(FATAL_ERROR "run-artifact did not load the artifact")
endif()
run("ldd" ldd "${WORK}/host/run-artifact")
if(last_output MATCHES "libLLVM|libMLIR|nvrtc|libfusec\\.so|not found")
  message(FATAL_ERROR "run-artifact needs a library it should not:\n${last_output}")
endif()
run("nm" nm -C "${WORK}/prefix/lib/libfusec_runtime.so")
if(last_output MATCHES "llvm::|mlir::|nvrtcCreateProgram|nvrtcCompileProgram")
  string(REGEX MATCH "[^\n]*(llvm::|mlir::|nvrtcCreateProgram|nvrtcCompileProgram)[^\n]*"
         first "${last_output}")
  message(FATAL_ERROR "libfusec_runtime.so holds compiler code: ${first}")
endif()
