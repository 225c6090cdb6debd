# The one place where external packages are found and wrapped as imported targets.
# Nothing is downloaded or vendored: every package comes from the system (see README.md).

# --- LLVM / MLIR 19 (Debian: llvm-19-dev libmlir-19-dev mlir-19-tools) -----------------
find_package(LLVM REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "fusec needs LLVM/MLIR 19, found ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")
endif()
find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/mlir NO_DEFAULT_PATH)
message(STATUS "fusec: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(AddLLVM)
include(TableGen)
include(AddMLIR)

# Debian links its MLIR static libraries against the LLVM dylib (target "LLVM"). We want
# binaries that run where no LLVM is installed, so the "LLVM" target is pointed at the static
# support libraries instead; LLVMSupport's own Z3 dependency is dropped (MLIR never uses it).
set(_llvm_static
  "${LLVM_LIBRARY_DIR}/libLLVMSupport.a"
  "${LLVM_LIBRARY_DIR}/libLLVMDemangle.a")
get_target_property(_llvm_configs LLVM IMPORTED_CONFIGURATIONS)
foreach(_cfg IN LISTS _llvm_configs)
  set_target_properties(LLVM PROPERTIES
    IMPORTED_LOCATION_${_cfg} "${LLVM_LIBRARY_DIR}/libLLVMSupport.a"
    IMPORTED_SONAME_${_cfg} "")
endforeach()
set_target_properties(LLVM PROPERTIES IMPORTED_NO_SONAME TRUE
  INTERFACE_LINK_LIBRARIES "${LLVM_LIBRARY_DIR}/libLLVMDemangle.a;rt;dl;m;pthread;z")
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "rt;dl;m;pthread;z;LLVMDemangle")

add_library(fusec_llvm INTERFACE)
target_include_directories(fusec_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_definitions(fusec_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(fusec_llvm INTERFACE LLVM)
add_library(fusec::llvm ALIAS fusec_llvm)

set(FUSEC_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}" CACHE PATH "FileCheck, not, count")
set(FUSEC_LIT "/usr/lib/llvm-19/build/utils/lit/lit.py" CACHE FILEPATH "lit.py")
if(DEFINED LLVM_EXTERNAL_LIT)
  set(FUSEC_LIT "${LLVM_EXTERNAL_LIT}" CACHE FILEPATH "lit.py" FORCE)
endif()

# --- CUDA toolkit: NVRTC is linked; the driver API is only included (libcuda is dlopen'ed) --
find_package(CUDAToolkit 12 REQUIRED)
add_library(fusec_cuda_headers INTERFACE)
target_include_directories(fusec_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
add_library(fusec::cuda_headers ALIAS fusec_cuda_headers)

# --- small C++ libraries --------------------------------------------------------------------
find_package(CLI11 REQUIRED CONFIG)
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
# zlib: the checksum of compiled artifacts (runtime/ArtifactFile.cpp).
find_package(ZLIB REQUIRED)
if(FUSEC_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()

