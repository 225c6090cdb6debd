//===- Nvrtc.cpp - compile generated CUDA C++ with NVRTC -----------------===//
#include "runtime/Nvrtc.h"
#include "compiler/support/LlvmError.h"

#include "runtime/DynamicLibrary.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <nvrtc.h>

#include <cstdlib>
#include <memory>
#include <optional>

namespace fusec {
namespace {

#define FUSEC_NVRTC_ENTRY_POINTS(X)                                            \
  X(nvrtcGetErrorString)                                                       \
  X(nvrtcVersion)                                                              \
  X(nvrtcCreateProgram)                                                        \
  X(nvrtcDestroyProgram)                                                       \
  X(nvrtcCompileProgram)                                                       \
  X(nvrtcGetProgramLogSize)                                                    \
  X(nvrtcGetProgramLog)                                                        \
  X(nvrtcGetCUBINSize)                                                         \
  X(nvrtcGetCUBIN)                                                             \
  X(nvrtcGetPTXSize)                                                           \
  X(nvrtcGetPTX)

/// NVRTC's entry points, resolved once for the process.
struct NvrtcLibrary {
#define FUSEC_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  FUSEC_NVRTC_ENTRY_POINTS(FUSEC_NVRTC_MEMBER)
#undef FUSEC_NVRTC_MEMBER
  std::string path;
  int version = 0;
};

llvm::Error makeError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Sonames first (the loader's own search, which honours LD_LIBRARY_PATH and
/// the ld.so cache), then the toolkit's usual homes for machines where the
/// toolkit is installed but not registered with the loader.
std::vector<std::string> candidatePaths() {
  const char *sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  std::vector<std::string> paths(std::begin(sonames), std::end(sonames));
  std::vector<std::string> dirs;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(variable); root && *root)
      dirs.push_back(std::string(root) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string &dir : dirs)
    for (const char *soname : sonames) {
      std::string path = dir + "/" + soname;
      if (!llvm::is_contained(paths, path))
        paths.push_back(path);
    }
  return paths;
}

/// Opens the library and resolves every entry point.
llvm::Expected<std::unique_ptr<NvrtcLibrary>> openNvrtc() {
  auto library =
      DynamicLibrary::openFirst(candidatePaths(), "NVRTC (libnvrtc)");
  if (!library)
    return library.takeError();
  auto nvrtc = std::make_unique<NvrtcLibrary>();
  nvrtc->path = library->path();
#define FUSEC_NVRTC_RESOLVE(name)                                              \
  {                                                                            \
    auto address = library->require(#name);                                    \
    if (!address)                                                              \
      return address.takeError();                                              \
    nvrtc->name = reinterpret_cast<decltype(nvrtc->name)>(*address);           \
  }
  FUSEC_NVRTC_ENTRY_POINTS(FUSEC_NVRTC_RESOLVE)
#undef FUSEC_NVRTC_RESOLVE
  int major = 0, minor = 0;
  if (nvrtc->nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return makeError(nvrtc->path + ": nvrtcVersion failed");
  nvrtc->version = major * 1000 + minor * 10;
  return nvrtc;
}

/// The process-wide library, or why there is none (kept as text because an
/// llvm::Error can be reported only once).
struct LoadedNvrtc {
  std::unique_ptr<NvrtcLibrary> library;
  std::string failure;
};

const LoadedNvrtc &loaded() {
  static const LoadedNvrtc state = [] {
    LoadedNvrtc result;
    auto library = openNvrtc();
    if (library)
      result.library = std::move(*library);
    else
      result.failure = llvm::toString(library.takeError());
    return result;
  }();
  return state;
}

/// Destroys the program on every path out of compile().
struct ProgramGuard {
  const NvrtcLibrary &nvrtc;
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      (void)nvrtc.nvrtcDestroyProgram(&program);
  }
};

/// `sm_90a` or `compute_80`: the only shapes NVRTC accepts; checked here so
/// a typo is reported as such rather than as an option error.
/// The number of an NVRTC architecture ("sm_90a" -> 90, "compute_80" -> 80),
/// nullopt for anything else.
std::optional<unsigned> architectureNumber(llvm::StringRef arch) {
  if (!arch.consume_front("sm_") && !arch.consume_front("compute_"))
    return std::nullopt;
  if (arch.ends_with("a") || arch.ends_with("f"))
    arch = arch.drop_back();
  unsigned number = 0;
  if (arch.empty() || !llvm::all_of(arch, llvm::isDigit) || arch.getAsInteger(10, number))
    return std::nullopt;
  return number;
}

/// The source with right-aligned line numbers, as compilers print it.
std::string numberedSource(llvm::StringRef source) {
  llvm::SmallVector<llvm::StringRef> lines;
  source.split(lines, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back();
  size_t width = std::to_string(lines.size()).size();
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t i = 0; i < lines.size(); ++i)
    os << llvm::right_justify(std::to_string(i + 1), width) << " | "
       << lines[i].rtrim('\r') << "\n";
  return text;
}

std::string programLog(const NvrtcLibrary &nvrtc, nvrtcProgram program) {
  size_t size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS ||
      size <= 1)
    return "";
  std::string log(size, '\0');
  if (nvrtc.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS)
    return "";
  log.resize(size - 1); // the size counts the terminating NUL
  return llvm::StringRef(log).rtrim().str();
}

/// Copies the compiled image (cubin or PTX) out of `program`.
llvm::Expected<std::string> programImage(const NvrtcLibrary &nvrtc,
                                         nvrtcProgram program, bool ptx) {
  size_t size = 0;
  nvrtcResult result = ptx ? nvrtc.nvrtcGetPTXSize(program, &size)
                           : nvrtc.nvrtcGetCUBINSize(program, &size);
  std::string image(size, '\0');
  if (result == NVRTC_SUCCESS)
    result = ptx ? nvrtc.nvrtcGetPTX(program, image.data())
                 : nvrtc.nvrtcGetCUBIN(program, image.data());
  if (result != NVRTC_SUCCESS)
    return makeError(std::string(ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN") +
                     " failed: " + nvrtc.nvrtcGetErrorString(result));
  if (ptx && !image.empty() && image.back() == '\0')
    image.pop_back(); // PTX is returned as a C string
  if (image.empty())
    return makeError("NVRTC produced an empty image");
  return image;
}

/// The full report of a failed compilation: what, why, the log and the
/// numbered source.
llvm::Error compileFailure(const KernelSource &kernel, llvm::StringRef arch,
                           llvm::StringRef reason, llvm::StringRef log,
                           llvm::ArrayRef<std::string> options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "NVRTC failed to compile kernel '" << kernel.name << "' for " << arch
     << ": " << reason << "\noptions: " << llvm::join(options, " ")
     << "\nNVRTC log:\n"
     << (log.empty() ? llvm::StringRef("(empty)") : log) << "\nsource of '"
     << kernel.name << "' (" << kernel.name << ".cu):\n"
     << numberedSource(kernel.source);
  return makeError(llvm::StringRef(text).rtrim().str());
}

/// The architecture NVRTC is given: PTX needs a virtual one.
std::string effectiveArch(const KernelSource &kernel) {
  llvm::StringRef arch = kernel.arch;
  if (kernel.emitPtx && arch.consume_front("sm_"))
    return "compute_" + arch.str();
  return kernel.arch;
}

} // namespace

std::vector<std::string> nvrtcOptions(const KernelSource &kernel) {
  std::vector<std::string> options = {"--gpu-architecture=" +
                                          effectiveArch(kernel),
                                      "-default-device", "--std=c++17"};
  options.insert(options.end(), kernel.options.begin(), kernel.options.end());
  return options;
}

llvm::Error loadNvrtc() {
  if (loaded().library)
    return llvm::Error::success();
  return makeError(loaded().failure);
}

int nvrtcVersion() { return loaded().library ? loaded().library->version : 0; }

llvm::Expected<CompiledKernel> compile(const KernelSource &kernel) {
  if (llvm::Error err = loadNvrtc())
    return makeError("cannot compile kernel '" + kernel.name +
                     "': " + llvm::toString(std::move(err)));
  const NvrtcLibrary &nvrtc = *loaded().library;
  llvm::StringRef requested = kernel.arch;
  std::string cannot =
      "cannot compile kernel '" + kernel.name + "': '" + kernel.arch + "' ";
  std::optional<unsigned> number = architectureNumber(requested);
  if (!number)
    return makeError(cannot + "is not an NVRTC architecture (expected e.g. "
                              "sm_80, sm_90a or compute_90a)");
  // The kernels use cp.async, bf16 mma and griddepcontrol's guards: Ampere on.
  if (*number < 80)
    return makeError(cannot + "is older than sm_80: fusec's kernels need Ampere (sm_80) or "
                              "newer");
  if (!kernel.emitPtx && requested.consume_front("compute_"))
    return makeError(cannot + "is a virtual architecture, which gives PTX " +
                     "only; use sm_" + requested.str() + " for a cubin");

  std::string programName = kernel.name + ".cu";
  ProgramGuard guard{nvrtc};
  nvrtcResult result =
      nvrtc.nvrtcCreateProgram(&guard.program, kernel.source.c_str(),
                               programName.c_str(), 0, nullptr, nullptr);
  std::vector<std::string> options = nvrtcOptions(kernel);
  std::string arch = effectiveArch(kernel);
  if (result != NVRTC_SUCCESS)
    return compileFailure(kernel, arch, nvrtc.nvrtcGetErrorString(result), "",
                          options);

  std::vector<const char *> optionPointers;
  for (const std::string &option : options)
    optionPointers.push_back(option.c_str());
  result = nvrtc.nvrtcCompileProgram(guard.program,
                                     static_cast<int>(optionPointers.size()),
                                     optionPointers.data());
  CompiledKernel compiled;
  compiled.log = programLog(nvrtc, guard.program);
  if (result != NVRTC_SUCCESS)
    return compileFailure(kernel, arch, nvrtc.nvrtcGetErrorString(result),
                          compiled.log, options);

  auto image = programImage(nvrtc, guard.program, kernel.emitPtx);
  if (!image)
    return compileFailure(kernel, arch, llvm::toString(image.takeError()),
                          compiled.log, options);
  (kernel.emitPtx ? compiled.ptx : compiled.cubin) = std::move(*image);
  return compiled;
}

} // namespace fusec
