//===- ArtifactTest.cpp - plans as JSON and artifacts, read back checked --===//
#include "PlanTestUtil.h"

#include "compiler/plan/PlanJson.h"
#include "frontends/json/GraphReader.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CudaDriver.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

using namespace fusec;

namespace {

/// An artifact of `plan` whose cubins are stand-ins (nothing here loads them).
Artifact artifactOf(const PlanDesc &plan) {
  Artifact a;
  a.producer = "fusec test";
  a.parameters.assign(plan.inputs.size(), false);
  std::vector<std::string> bodies;
  (void)planToJson(plan, bodies);
  ArtifactTarget t{plan, {}};
  for (size_t b = 0; b < bodies.size(); ++b)
    t.cubins.push_back("cubin " + std::to_string(b) + " of " + plan.arch);
  a.targets.push_back(std::move(t));
  return a;
}

PlanDesc planOf(const char *file, const char *arch, const char *gemm = "auto") {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  EXPECT_TRUE(bool(buffer)) << file;
  mlir::MLIRContext ctx;
  auto plan = fusec::testing::planFor(ctx, (*buffer)->getBuffer(), file, true, arch, gemm);
  EXPECT_TRUE(bool(plan)) << file << ": " << llvm::toString(plan.takeError());
  return *plan;
}

/// The bytes of an artifact file whose header is `header` (checksum right).
std::string withHeader(const std::string &header) {
  std::string out("FUSECART", 8);
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out.push_back(char((v >> (8 * i)) & 0xff));
  };
  put(Artifact::kFormatVersion, 4);
  put(0, 4);
  put(header.size(), 8);
  put(0, 8);
  put(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef *>(header.data()),
            uInt(header.size())),
      4);
  put(0, 4);
  return out + header;
}

std::string messageOf(rt::Expected<Artifact> a) {
  EXPECT_FALSE(bool(a));
  return a ? std::string() : a.takeError().message();
}

} // namespace

TEST(PlanJson, EveryBenchAndExampleGraphReadsBackTheSame) {
  std::vector<std::string> files = fusec::testing::graphFiles(
      {FUSEC_SOURCE_DIR "/examples", FUSEC_SOURCE_DIR "/bench/graphs"});
  ASSERT_GE(files.size(), 40u);
  int kernels = 0, matmuls = 0, maps = 0;
  for (const std::string &f : files)
    for (const char *arch : {"sm_90a", "sm_80"})
      for (const char *gemm : {"auto", "fusec"}) {
      PlanDesc plan = planOf(f.c_str(), arch, gemm);
      std::vector<std::string> bodies, again;
      nlohmann::json j = planToJson(plan, bodies);
      auto back = planFromJson(j, bodies, f);
      ASSERT_TRUE(bool(back)) << f << " " << arch << ": " << back.takeError().message();
      EXPECT_EQ(planToJson(*back, again), j) << f << " " << arch;
      EXPECT_EQ(again, bodies) << f << " " << arch;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        const PlanStep &s = plan.steps[i], &r = back->steps[i];
        EXPECT_EQ(r.kernel.source, s.kernel.source) << f << " " << s.name;
        kernels += s.kind == PlanStep::Kind::Kernel;
        matmuls += s.kind == PlanStep::Kind::Matmul;
        maps += int(s.kernel.tensorMaps.size());
      }
      }
  // The graphs cover every part of a plan.
  EXPECT_GT(kernels, 100);
  EXPECT_GT(matmuls, 5);
  EXPECT_GT(maps, 20);
}

TEST(Artifact, ReadsBackItsTargetsAndCubins) {
  PlanDesc hopper = planOf(FUSEC_SOURCE_DIR "/examples/rms_norm.json", "sm_90a");
  PlanDesc ampere = planOf(FUSEC_SOURCE_DIR "/examples/rms_norm.json", "sm_80");
  Artifact a = artifactOf(hopper);
  a.targets.push_back(artifactOf(ampere).targets.front());
  a.parameters.back() = true;
  auto bytes = serializeArtifact(a);
  ASSERT_TRUE(bool(bytes));
  auto back = parseArtifact(*bytes, "m.fusec");
  ASSERT_TRUE(bool(back)) << back.takeError().message();
  EXPECT_EQ(back->producer, "fusec test");
  EXPECT_EQ(back->parameters, a.parameters);
  ASSERT_EQ(back->targets.size(), 2u);
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(back->targets[t].plan.arch, a.targets[t].plan.arch);
    EXPECT_EQ(back->targets[t].cubins, a.targets[t].cubins);
  }
  EXPECT_EQ(back->inputs().size(), hopper.inputs.size());
}

TEST(Artifact, PicksTheTargetTheDeviceRuns) {
  Artifact a = artifactOf(planOf(FUSEC_SOURCE_DIR "/examples/softmax.json", "sm_80"));
  a.targets.push_back(
      artifactOf(planOf(FUSEC_SOURCE_DIR "/examples/softmax.json", "sm_90a")).targets.front());
  DeviceInfo h100;
  h100.name = "H100";
  h100.ccMajor = 9;
  auto t = a.targetFor(h100, "m.fusec");
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)->plan.arch, "sm_90a");
  DeviceInfo l40s = h100;
  l40s.name = "L40S";
  l40s.ccMajor = 8;
  l40s.ccMinor = 9;
  t = a.targetFor(l40s, "m.fusec");
  ASSERT_TRUE(bool(t));
  EXPECT_EQ((*t)->plan.arch, "sm_80");
  DeviceInfo t4 = h100;
  t4.name = "T4";
  t4.ccMajor = 7;
  t4.ccMinor = 5;
  t = a.targetFor(t4, "m.fusec");
  ASSERT_FALSE(bool(t));
  EXPECT_EQ(t.takeError().message(),
            "artifact 'm.fusec' holds kernels for sm_80, sm_90a, none of which device 0 (T4, "
            "sm_75) runs: compile it again with --arch sm_75");
}

/// A softmax over rows of x [at, 4096] planned as the compile at N = `at`
/// of rows that vary up to 4096: the rows of x and y marked N.
PlanDesc paddedAt(int64_t at) {
  const std::string text = R"({"fusec": 1, "name": "softmax", "inputs": [
      {"name": "x", "dtype": "bf16", "shape": [)" + std::to_string(at) + R"(, 4096]}],
    "nodes": [{"name": "y", "op": "softmax", "inputs": ["x"], "attrs": {"axis": -1}}],
    "outputs": ["y"]})";
  mlir::MLIRContext ctx;
  auto made = fusec::testing::planFor(ctx, text, "softmax.json", true, "sm_90a", "auto");
  EXPECT_TRUE(bool(made)) << llvm::toString(made.takeError());
  PlanDesc plan = *made;
  plan.paddedAt = {{"N", at}};
  plan.sizeBounds = {{"N", 4096}};
  plan.padding.sizeArgs.assign(plan.inputs.size(), "");
  plan.padding.argDims = {{"N", ""}};
  plan.padding.resultDims = {{"N", ""}};
  plan.padding.argShapes = {plan.inputs[0].shape};
  return plan;
}

TEST(Artifact, PaddedCompilesReadBackAndAreChecked) {
  Artifact a = artifactOf(paddedAt(4096));
  a.targets.push_back(artifactOf(paddedAt(3072)).targets.front());
  auto bytes = serializeArtifact(a);
  ASSERT_TRUE(bool(bytes));
  auto back = parseArtifact(*bytes, "m.fusec");
  ASSERT_TRUE(bool(back)) << back.takeError().message();
  ASSERT_TRUE(back->sizesVary());
  ASSERT_EQ(back->targetsOf("sm_90a").size(), 2u);
  const PlanDesc &second = back->targets[1].plan;
  EXPECT_EQ(second.paddedAt, (SizeMap{{"N", 3072}}));
  EXPECT_EQ(second.sizeBounds, (SizeMap{{"N", 4096}}));
  EXPECT_EQ(second.padding.argDims, a.targets[1].plan.padding.argDims);
  EXPECT_EQ(second.padding.argShapes, (std::vector<std::vector<int64_t>>{{3072, 4096}}));
  // What a call at N = 77 passes and gets.
  PaddedCallSpecs call = paddedCallSpecs(second.padding, second.inputs, second.outputs, {{"N", 77}});
  EXPECT_EQ(call.inputs[0].shape, (std::vector<int64_t>{77, 4096}));
  EXPECT_EQ(call.outputs[0].shape, (std::vector<int64_t>{77, 4096}));
  // One compile twice, and compiles that disagree on what they take.
  Artifact twice = a;
  twice.targets[1] = twice.targets[0];
  EXPECT_EQ(messageOf(parseArtifact(*serializeArtifact(twice), "m")),
            "artifact 'm': it holds target sm_90a twice at the same sizes");
  Artifact other = a;
  other.targets[1].plan.inputs[0].name = "z";
  EXPECT_EQ(messageOf(parseArtifact(*serializeArtifact(other), "m")),
            "artifact 'm': its targets disagree on the graph's inputs or outputs");
  // Sizes, bounds and marked dims that do not fit together.
  auto refused = [&](const std::function<void(PlanDesc &)> &change) {
    PlanDesc p = paddedAt(3072);
    change(p);
    auto b = serializeArtifact(artifactOf(p));
    return b ? messageOf(parseArtifact(*b, "m")) : b.takeError().message();
  };
  const std::string where = "artifact 'm', target sm_90a: padding: ";
  EXPECT_EQ(refused([](PlanDesc &p) { p.paddedAt["N"] = 5000; }),
            where + "'N' is compiled at 5000 with a bound of 4096");
  EXPECT_EQ(refused([](PlanDesc &p) { p.paddedAt["N"] = 0; }),
            where + "'N' is compiled at 0 with a bound of 4096");
  EXPECT_EQ(refused([](PlanDesc &p) { p.paddedAt["N"] = 3000; }),
            where + "'N' is compiled at 3000, which is not a padded size");
  EXPECT_EQ(refused([](PlanDesc &p) { p.sizeBounds = {{"M", 4096}}; }),
            where + "'N' has a size but no bound");
  EXPECT_EQ(refused([](PlanDesc &p) { p.padding.argDims = {{"M", ""}}; }),
            where + "input 0's marked dims do not match it");
  EXPECT_EQ(refused([](PlanDesc &p) { p.padding.resultDims = {{"", "N"}}; }),
            where + "output 0's marked dims do not match it");
  EXPECT_EQ(refused([](PlanDesc &p) { p.padding.sizeArgs = {"N"}; }),
            where + "input 0 takes a size but is not an i32 scalar");
  EXPECT_EQ(refused([](PlanDesc &p) { p.padding.argDims.clear(); }),
            where + "its signature does not match the inputs and outputs");
  EXPECT_EQ(refused([](PlanDesc &p) {
              p.paddedAt = {{"N,M", 3072}};
              p.sizeBounds = {{"N,M", 4096}};
              p.padding.argDims = {{"N,M", ""}};
              p.padding.resultDims = {{"N,M", ""}};
            }),
            where + "'N,M' is not a size name --bind can give");
  EXPECT_EQ(refused([](PlanDesc &p) { p.ranks = 2; p.inputShards = {0}; p.outputShards = {0}; }),
            where + "sizes that vary in a plan split over ranks");
  // Each architecture loads at its bounds; weights never vary.
  Artifact unbounded = artifactOf(paddedAt(3072));
  EXPECT_EQ(messageOf(parseArtifact(*serializeArtifact(unbounded), "m")),
            "artifact 'm': target sm_90a has no compile at the bounds");
  Artifact weighted = a;
  weighted.parameters[0] = true;
  EXPECT_EQ(messageOf(parseArtifact(*serializeArtifact(weighted), "m")),
            "artifact 'm': parameter 0 has a dim that varies");
  PlanDesc unsized = paddedAt(3072);
  unsized.paddedAt.clear();  // not written so: checked where a plan is made
  EXPECT_EQ(checkPlan(unsized, "m").message(),
            "m: padding: dims that vary without the sizes they are compiled at");
}

TEST(PlanPadding, PaddedSizesUpToABound) {
  EXPECT_EQ(paddedSizesUpTo(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(paddedSizesUpTo(13), (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12, 13}));
  EXPECT_EQ(paddedSizesUpTo(16), (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12, 16}));
  // Every size up to the bound is served by one of them, the next above it.
  for (int64_t bound : {1, 5, 77, 300, 4096}) {
    std::vector<int64_t> all = paddedSizesUpTo(bound);
    for (int64_t s = 1; s <= bound; ++s)
      EXPECT_NE(std::find(all.begin(), all.end(), paddedSize(s, bound)), all.end()) << s;
  }
  EXPECT_EQ(paddedSizesUpTo(kMaxPaddedBound).size(), 62u);
}

TEST(Artifact, DamagedFilesAreRefusedWithTheCause) {
  auto bytes = serializeArtifact(artifactOf(planOf(FUSEC_SOURCE_DIR "/examples/softmax.json",
                                                   "sm_90a")));
  ASSERT_TRUE(bool(bytes));
  const std::string &good = *bytes;
  EXPECT_EQ(messageOf(parseArtifact("", "m")), "artifact 'm': not a fusec artifact (no FUSECART header)");
  EXPECT_NE(messageOf(parseArtifact(good.substr(0, good.size() - 1), "m"))
                .find("truncated or extended"),
            std::string::npos);
  EXPECT_NE(messageOf(parseArtifact(good + "x", "m")).find("truncated or extended"),
            std::string::npos);
  // Every byte after the preamble is covered by the checksum.
  for (size_t at : {size_t(40), good.size() / 2, good.size() - 1}) {
    std::string bad = good;
    bad[at] ^= 0x20;
    EXPECT_EQ(messageOf(parseArtifact(bad, "m")),
              "artifact 'm': checksum mismatch: the file was altered or damaged")
        << at;
  }
  // Sizes that add up past the end do not wrap around.
  std::string huge = good;
  for (int i = 0; i < 8; ++i)
    huge[16 + i] = char(0xff);
  EXPECT_NE(messageOf(parseArtifact(huge, "m")).find("truncated or extended"), std::string::npos);
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(messageOf(parseArtifact(withHeader(deep), "m")),
            "artifact 'm': its header nests deeper than 16 levels");
  EXPECT_EQ(messageOf(parseArtifact(withHeader("{\"producer\": 1}"), "m")),
            "artifact 'm': its header: type must be string, but is number");
  EXPECT_EQ(messageOf(parseArtifact(withHeader("{\"producer\": \"x\"}"), "m")),
            "artifact 'm': its header: key 'parameters' not found");
}

TEST(Artifact, PlansThatWouldReachOutsideTheirBuffersAreRefused) {
  const PlanDesc base = planOf(FUSEC_SOURCE_DIR "/examples/softmax.json", "sm_90a");
  ASSERT_FALSE(base.steps.empty());
  auto refused = [&](const char *what, auto &&edit) {
    PlanDesc plan = base;
    edit(plan);
    auto bytes = serializeArtifact(artifactOf(plan));
    ASSERT_TRUE(bool(bytes));
    std::string message = messageOf(parseArtifact(*bytes, "m.fusec"));
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  refused("argument buffer 99 does not exist", [](PlanDesc &p) { p.steps[0].kernel.args[0] = 99; });
  refused("graph input or output 7 does not exist", [](PlanDesc &p) {
    for (PlanBuffer &b : p.buffers)
      if (b.kind == PlanBuffer::Kind::Input)
        b.index = 7;
  });
  refused("a launch shape the driver cannot take", [](PlanDesc &p) { p.steps[0].kernel.block = 0; });
  refused("a launch shape the driver cannot take",
          [](PlanDesc &p) { p.steps[0].kernel.block = 4096; });
  refused("more parameters than a launch takes",
          [](PlanDesc &p) { p.steps[0].kernel.args.resize(70, 0); });
  refused("a tensor map of an argument that does not exist", [](PlanDesc &p) {
    TensorMapParam m;
    m.arg = 40;
    p.steps[0].kernel.tensorMaps.push_back(m);
  });
  refused("a temporary outside the arena", [](PlanDesc &p) {
    PlanBuffer t;
    t.tensor = p.inputs[0];
    t.arenaOffset = p.arenaBytes;
    p.buffers.push_back(t);
  });
  refused("has a dimension out of range",
          [](PlanDesc &p) { p.inputs[0].shape[0] = int64_t(1) << 50; });
  refused("a temporary outside the arena", [](PlanDesc &p) {
    PlanBuffer t;
    t.tensor = p.inputs[0];
    t.arenaOffset = std::numeric_limits<int64_t>::max() - 15;  // no wrap-around
    p.buffers.push_back(t);
  });
}

TEST(Artifact, ProductsAndTensorMapsMustStayInsideTheirBuffers) {
  // A plan with a cuBLASLt product and one with TMA tensor maps.
  const PlanDesc lt = planOf(FUSEC_SOURCE_DIR "/examples/linear_gelu_residual.json", "sm_90a",
                             "cublaslt");
  const PlanDesc tma = planOf(FUSEC_SOURCE_DIR "/examples/linear_gelu_residual.json", "sm_90a",
                              "fusec");
  auto refused = [&](const PlanDesc &base, const char *what, auto &&edit) {
    PlanDesc plan = base;
    ASSERT_TRUE(edit(plan)) << "the plan has no step to edit";
    auto bytes = serializeArtifact(artifactOf(plan));
    ASSERT_TRUE(bool(bytes));
    std::string message = messageOf(parseArtifact(*bytes, "m.fusec"));
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  auto firstOf = [](PlanDesc &p, PlanStep::Kind kind, bool maps) -> PlanStep * {
    for (PlanStep &s : p.steps)
      if (s.kind == kind && (!maps || !s.kernel.tensorMaps.empty()))
        return &s;
    return nullptr;
  };
  refused(lt, "an operand reaches past its buffer", [&](PlanDesc &p) {
    PlanStep *s = firstOf(p, PlanStep::Kind::Matmul, false);
    return s && (s->matmul.desc.c.rows *= 2, true);
  });
  refused(lt, "an operand reaches past its buffer", [&](PlanDesc &p) {
    PlanStep *s = firstOf(p, PlanStep::Kind::Matmul, false);
    return s && (s->matmul.desc.a.ld += 64, true);
  });
  refused(tma, "a tensor map reaches past its buffer", [&](PlanDesc &p) {
    PlanStep *s = firstOf(p, PlanStep::Kind::Kernel, true);
    return s && (s->kernel.tensorMaps[0].rows += 1000, true);
  });
  refused(tma, "a tensor map reaches past its buffer", [&](PlanDesc &p) {
    PlanStep *s = firstOf(p, PlanStep::Kind::Kernel, true);
    return s && (s->kernel.tensorMaps[0].offsetBytes += 1 << 30, true);
  });
}

TEST(Artifact, NumbersMustBeIntegersInRangeAndBodiesInOrder) {
  PlanDesc plan = planOf(FUSEC_SOURCE_DIR "/examples/softmax.json", "sm_90a");
  std::vector<std::string> bodies;
  nlohmann::json j = planToJson(plan, bodies);
  nlohmann::json huge = j, negative = j, fraction = j;
  huge["steps"][0]["kernel"]["grid"] = 1e300;
  negative["steps"][0]["kernel"]["block"] = -1;
  fraction["arenaBytes"] = 0.5;
  EXPECT_NE(planFromJson(huge, bodies, "m").takeError().message().find("expected an integer"),
            std::string::npos);
  EXPECT_NE(planFromJson(negative, bodies, "m").takeError().message().find("out of range"),
            std::string::npos);
  EXPECT_NE(planFromJson(fraction, bodies, "m").takeError().message().find("expected an integer"),
            std::string::npos);
  // A body no kernel uses.
  std::vector<std::string> extra = bodies;
  extra.push_back("an unused body");
  EXPECT_EQ(planFromJson(j, extra, "m").takeError().message(),
            "m: 2 kernel bodies, 1 of them used");
}

TEST(Artifact, OneShotAllReducesReadBackAndStayInTheirRegion) {
  // The example block split over 2 ranks: its two all-reduces of 2 KB run as
  // the one-shot kernel (families/Collective.cpp): the first at the start of
  // the row kernel after it (the residual add and norm), the second, read by
  // a pointwise add, as a step of its own that carries the kernel.
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/examples/tp_llama_block.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  auto module = importGraphText((*buffer)->getBuffer(), "tp_llama_block.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  CompileOptions o;
  o.ranks = 2;
  o.device = "h200";
  o.arch = "sm_90a";
  ASSERT_FALSE(bool(fuseModule(**module, o)));
  auto built = buildPlan(**module, o);
  ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
  const PlanDesc base = *built;
  int oneShot = 0, ahead = 0;
  for (const PlanStep &s : base.steps)
    if (s.kind == PlanStep::Kind::Collective && s.collective.peer) {
      ++oneShot;
      EXPECT_EQ(s.kernel.family, "all_reduce (one-shot)");
      EXPECT_EQ(s.kernel.args, (std::vector<int>{s.collective.src, s.collective.dst}));
    } else if (s.kind == PlanStep::Kind::Kernel && s.collective.peer) {
      ++ahead;
      EXPECT_EQ(s.kernel.family, "row_reduction");
      EXPECT_EQ(s.collective.src, s.collective.dst);  // in place, where NCCL runs it
      EXPECT_NE(std::find(s.kernel.args.begin(), s.kernel.args.begin() + s.kernel.inputs,
                          s.collective.src),
                s.kernel.args.begin() + s.kernel.inputs);
      EXPECT_NE(s.kernel.source.find("fz_peer_reduce(fz_partial"), std::string::npos);
    }
  ASSERT_EQ(oneShot, 1);
  ASSERT_EQ(ahead, 1);
  // Their kernels are bodies of the plan, saved and read back with it.
  std::vector<std::string> bodies, again;
  nlohmann::json j = planToJson(base, bodies);
  auto back = planFromJson(j, bodies, "tp.fusec");
  ASSERT_TRUE(bool(back)) << back.takeError().message();
  EXPECT_EQ(planToJson(*back, again), j);
  // A step whose kernel no longer matches its collective, or a tensor past
  // the region, is refused.
  // `edit` changes the first step of `kind` with a one-shot all-reduce.
  auto refusedAt = [&](PlanStep::Kind kind, const char *what, auto &&edit) {
    PlanDesc plan = base;
    for (PlanStep &s : plan.steps)
      if (s.kind == kind && s.collective.peer) {
        edit(plan, s);
        break;
      }
    auto bytes = serializeArtifact(artifactOf(plan));
    ASSERT_TRUE(bool(bytes));
    std::string message = messageOf(parseArtifact(*bytes, "m.fusec"));
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  auto refused = [&](const char *what, auto &&edit) {
    refusedAt(PlanStep::Kind::Collective, what, edit);
  };
  refused("does not match its collective", [](PlanDesc &, PlanStep &s) { s.kernel.grid = 2; });
  refused("does not match its collective",
          [](PlanDesc &, PlanStep &s) { std::swap(s.kernel.args[0], s.kernel.args[1]); });
  const char *notTaken = "a one-shot all-reduce of a tensor its kernel does not take";
  refused(notTaken, [](PlanDesc &p, PlanStep &s) {
    p.arenaBytes += 8 << 20;
    for (int b : {s.collective.src, s.collective.dst})
      p.buffers[b].tensor.shape = {1 << 20};  // 4 MB of f32, past the region's 512 KB
  });
  refused(notTaken, [](PlanDesc &p, PlanStep &s) {
    for (int b : {s.collective.src, s.collective.dst})
      p.buffers[b].tensor.dtype = DType::I32;
  });
  // The row kernel's all-reduce: of one of its inputs, in place, over the
  // plan's ranks, with no more blocks than the region has flags.
  auto refusedAhead = [&](const char *what, auto &&edit) {
    refusedAt(PlanStep::Kind::Kernel, what, edit);
  };
  const char *notInput = "not a sum of one of its inputs";
  refusedAhead(notInput, [](PlanDesc &, PlanStep &s) { s.collective.src = s.kernel.args.back(); });
  refusedAhead(notInput, [](PlanDesc &, PlanStep &s) { s.collective.dst = s.kernel.args.back(); });
  refusedAhead(notInput, [](PlanDesc &, PlanStep &s) { s.collective.reduce = "max"; });
  refusedAhead("another count of ranks", [](PlanDesc &, PlanStep &s) { s.collective.ranks = 4; });
  const char *blocks = "its blocks cannot take";
  refusedAhead(blocks, [](PlanDesc &, PlanStep &s) { s.kernel.grid = 33; });
  refusedAhead(blocks, [](PlanDesc &p, PlanStep &s) {
    p.buffers[s.collective.src].tensor.dtype = DType::I32;
  });
}
