//===- FuzzCompile.cpp - libFuzzer target: a graph through the compiler ---===//
//
// Any bytes as a graph file, and where the reader accepts them, the whole
// compile a graph gets before NVRTC: decomposition, the split over ranks
// (2 to 4 of them for most inputs, by the input's length, so the graph's
// `shard` fields count), fusion, planning and the kernels' source text.
// A graph that names a dim "S" is also read padded (`--max S=8` at S=6:
// the dims compared at two sizes, -fusec-pad-sizes) and compiled so.
// Each step either succeeds or gives an error; no crash, leak, hang or
// unbounded allocation.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/pipeline/Compile.h"
#include "compiler/pipeline/PaddedGraph.h"
#include "frontends/json/GraphReader.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext();
    c->disableMultithreading();
    return c;
  }();
  // The passes' diagnostics are the errors checked here, not printed.
  mlir::ScopedDiagnosticHandler quiet(ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (text.contains("\"S\"")) {
    auto padded = fusec::readPadded(
        [&](const fusec::SizeMap &at) { return fusec::importGraphText(text, "fuzz.json", *ctx, at); },
        {{"S", 6}}, {{"S", 8}});
    if (!padded) {
      llvm::consumeError(padded.takeError());
    } else {
      fusec::CompileOptions options;
      if (llvm::Error err = fusec::fuseModule(**padded, options))
        llvm::consumeError(std::move(err));
      else if (auto plan = fusec::buildPlan(**padded, options); !plan)
        llvm::consumeError(plan.takeError());
    }
  }
  auto module = fusec::importGraphText(text, "fuzz.json", *ctx);
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  fusec::CompileOptions options;
  options.ranks = size % 4 == 0 ? 1 : int(size % 4) + 1;
  if (llvm::Error err = fusec::fuseModule(**module, options)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  auto plan = fusec::buildPlan(**module, options);
  if (!plan)
    llvm::consumeError(plan.takeError());
  return 0;
}
