//===- PaddedProgram.cpp - one program for every size up to a bound -------===//
//
// Options::maxSizes: the program is compiled at padded sizes and calls run
// at any sizes up to them (compiler/pipeline/PaddedGraph.h). resize() moves
// between padded compiles, each made on its first use and kept; the GPU
// context, kernel cache and bound weights are shared by all of them.
//
//===----------------------------------------------------------------------===//
#include "api/ProgramImpl.h"
#include "api/RuntimeStatus.h"
#include "runtime/PaddedCall.h"

#include "compiler/support/Printable.h"
#include "frontends/json/GraphReader.h"

namespace fusec {

namespace {

llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", message.c_str());
}

/// The specs of what calls at the program's sizes pass and get.
void callSpecs(Program::Impl &p) {
  p.call = paddedCallSpecs(p.plan.padding, p.plan.inputs, p.plan.outputs, p.call.sizes);
}

} // namespace

void Program::Impl::swapCompiled(Compiled &c) {
  std::swap(ctx, c.ctx);
  std::swap(original, c.original);
  std::swap(fused, c.fused);
  std::swap(plan, c.plan);
  std::swap(parameters, c.parameters);
  std::swap(exe, c.exe);
  std::swap(padBuffers, c.padBuffers);
}

llvm::Error Program::Impl::checkSizes(const SizeMap &sizes) const {
  for (const auto &[name, size] : sizes) {
    auto bound = bounds.find(name);
    if (bound == bounds.end())
      return fail("'" + printable(name) + "' is not a size that varies (Options::maxSizes)");
    if (size < 1 || size > bound->second)
      return fail(printable(name) + "=" + std::to_string(size) + " is outside 1.." +
                  std::to_string(bound->second));
  }
  return llvm::Error::success();
}

llvm::Expected<Program::Impl::Compiled> Program::Impl::compilePaddedAt(const SizeMap &at) const {
  auto c = std::make_unique<mlir::MLIRContext>();
  SizeMap readAt = fixedSizes;
  for (const auto &[name, size] : at)
    readAt[name] = size;
  mlir::MLIRContext &cref = *c;
  mlir::TimingScope read = options.timing
                               ? options.timing->nest("read the graph at two sizes and pad it")
                               : mlir::TimingScope();
  auto module = readPadded([&](const SizeMap &s) { return reread(cref, s); }, readAt, bounds);
  read.stop();
  if (!module)
    return module.takeError();
  auto program = compileModule(std::move(c), std::move(*module), options);
  if (!program)
    return program.takeError();
  Program::Impl &n = ProgramAccess::of(**program);
  Compiled made;
  made.ctx = std::move(n.ctx);
  made.original = std::move(n.original);
  made.fused = std::move(n.fused);
  made.plan = std::move(n.plan);
  made.parameters = n.parameters;
  made.plan.padding = paddedSignature(graphFunction(*made.original));
  made.plan.paddedAt = at;
  made.plan.sizeBounds = bounds;
  return std::move(made);
}

llvm::Error Program::Impl::compileAt(const SizeMap &sizes) {
  if (llvm::Error err = checkSizes(sizes))
    return err;
  SizeMap now = call.sizes;
  for (const auto &[name, size] : sizes)
    now[name] = size;
  SizeMap at;
  for (const auto &[name, bound] : bounds)
    at[name] = paddedSize(now.count(name) ? now[name] : bound, bound);
  if (at != plan.paddedAt) {
    const bool wasLoaded = exe != nullptr;
    if (wasLoaded)  // calls in flight still read this compile's buffers
      if (rt::Error err = gpu->driver().check(gpu->driver().cuCtxSynchronize(), "resize"))
        return std::move(err);
    Compiled next;
    if (auto it = kept.find(at); it != kept.end()) {
      next = std::move(it->second);
      kept.erase(it);
    } else {
      auto made = compilePaddedAt(at);
      if (!made)
        return made.takeError();
      next = std::move(*made);
      ++compiles;
    }
    swapCompiled(next);  // `next` holds the compile in use until now
    // Loaded and bound before the switch is made: where either fails, the
    // program stays at its sizes, whole (the new compile kept for a retry),
    // rather than at a plan whose sizes, buffers and weights disagree.
    auto loadAndBind = [&]() -> llvm::Error {
      if (wasLoaded && !exe)
        if (llvm::Error err = ensureLoaded())
          return err;
      // The weights bound now, whether this compile was loaded before they
      // were bound or not at all.
      if (exe && weights) {
        if (rt::Error err = bindWeightsOfAnotherCompile(*exe, weights->pointers()))
          return std::move(err);
      }
      return llvm::Error::success();
    };
    if (llvm::Error err = loadAndBind()) {
      swapCompiled(next);
      kept[at] = std::move(next);
      return err;
    }
    if (!next.plan.paddedAt.empty())
      kept[next.plan.paddedAt] = std::move(next);
  }
  call.sizes = now;
  callSpecs(*this);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Program>> compilePadded(
    std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(mlir::MLIRContext &,
                                                                    const SizeMap &)>
        reread,
    const SizeMap &sizes, const SizeMap &bounds, const CompileOptions &options) {
  if (options.ranks > 1)
    return fail("sizes that vary (Options::maxSizes, --max) do not combine with ranks in this "
                "version");
  std::unique_ptr<Program> program = ProgramAccess::make();
  Program::Impl &p = ProgramAccess::of(*program);
  p.options = options;  // the caller's timing scope for the first compile only
  p.reread = std::move(reread);
  p.bounds = bounds;
  SizeMap first;
  for (const auto &[name, size] : sizes)
    (bounds.count(name) ? first : p.fixedSizes)[name] = size;
  for (const auto &[name, bound] : bounds) {
    if (bound < 1)
      return fail("the bound of '" + printable(name) + "' is " + std::to_string(bound) +
                  "; a bound is at least 1");
    first.emplace(name, bound);
  }
  p.compiles = 0;
  llvm::Error err = p.compileAt(first);
  p.options.timing = nullptr;  // the scope ends with the caller's compile
  if (err)
    return std::move(err);
  return program;
}

rt::Error runPadded(Program::Impl &p, const std::vector<uint64_t> &in,
                    const std::vector<uint64_t> &out, CUstream stream, bool asGraph) {
  if (!p.padBuffers)
    p.padBuffers = std::make_unique<PaddedBuffers>(p.gpu->driver());
  return enqueuePadded(*p.exe, *p.padBuffers, p.call, p.parameters, p.weights != nullptr,
                       p.inputPadded, in, out, stream, asGraph);
}

Status Program::resize(const std::map<std::string, int64_t> &sizes) {
  if (p->bounds.empty())
    return Status::error("resize: the program was compiled without Options::maxSizes",
                         ErrorCode::InvalidArgument);
  if (llvm::Error err = p->checkSizes(sizes))
    return Status::error(llvm::toString(std::move(err)), ErrorCode::InvalidArgument);
  std::lock_guard<std::mutex> lock(p->loading);
  if (llvm::Error err = p->compileAt(sizes))
    return Status::error(llvm::toString(std::move(err)), ErrorCode::CompileFailed);
  return Status::success();
}

std::map<std::string, int64_t> Program::sizes() const {
  std::map<std::string, int64_t> out;
  for (const auto &[name, bound] : p->bounds)
    out[name] = p->call.sizes.count(name) ? p->call.sizes.at(name) : bound;
  return out;
}

std::map<std::string, int64_t> Program::paddedSizes() const { return p->plan.paddedAt; }

int Program::compiles() const { return p->compiles; }

std::vector<int64_t> Program::paddedShape(size_t i) const {
  // Call input i is plan input i: the size arguments come last.
  return i < inputs().size() ? p->plan.inputs[i].shape : std::vector<int64_t>();
}

Status Program::setInputPadded(size_t i, bool padded) {
  if (p->bounds.empty())
    return Status::error("setInputPadded: the program was compiled without Options::maxSizes",
                         ErrorCode::InvalidArgument);
  return toStatus(setInputPaddedFlag(p->inputPadded, p->call.inputs.size(), i, padded),
                  ErrorCode::InvalidArgument);
}

} // namespace fusec
