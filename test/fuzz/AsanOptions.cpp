//===- AsanOptions.cpp - AddressSanitizer's defaults for the fuzz targets --===//
//
// LLVM's and MLIR's libraries come uninstrumented from Debian while their
// inline allocator code in fusec's instrumented sources poisons and
// unpoisons memory by hand: the two disagree, and ASan reports
// use-after-poison in MLIRContext's own construction. Manual poisoning is
// therefore ignored; ASan's own checks (bounds, use after free, leaks) stay.
//
//===----------------------------------------------------------------------===//
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }
