//===- AttentionForm.cpp - a softmax that rescales a contraction ----------===//
#include "compiler/schedule/AttentionForm.h"

#include "compiler/cost/CostModel.h"
#include "compiler/cost/DeviceProfile.h"
#include "compiler/schedule/StridedView.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace mlir;

namespace fusec {
namespace {

/// The compute op behind `v`, null for block arguments, views and generators.
Operation *computeDef(Value v) {
  Operation *d = v.getDefiningOp();
  return d && !isView(d) && !isGenerator(d) ? d : nullptr;
}

bool isHalf(DType t) { return t == DType::BF16 || t == DType::F16; }

/// The axis of a rank-`rank` tensor along which `v`, broadcast to it, is
/// its own index (an iota), or -1.
int64_t iotaAxis(Value v, ArrayRef<int64_t> shape) {
  auto iota = v.getDefiningOp<IotaOp>();
  if (!iota)
    return -1;
  ArrayRef<int64_t> s = shapeOf(v);
  int64_t axis = static_cast<int64_t>(shape.size() - s.size()) + iota.getDim();
  return s[iota.getDim()] == shape[axis] ? axis : -1;
}

/// Whether `logits` of shape [..., L, S] is where(i >= j, y, -inf).
bool isCausal(Value logits) {
  auto w = logits.getDefiningOp<WhereOp>();
  if (!w)
    return false;
  auto c = w.getRhs().getDefiningOp<ConstantOp>();
  auto value = c ? c->getAttrOfType<FloatAttr>("value") : FloatAttr();
  if (!value || !value.getValue().isInfinity() || !value.getValue().isNegative())
    return false;
  ArrayRef<int64_t> s = shapeOf(logits);
  int64_t rows = static_cast<int64_t>(s.size()) - 2, cols = rows + 1;
  Operation *cond = w.getCondition().getDefiningOp();
  if (auto ge = dyn_cast_or_null<GeOp>(cond))
    return iotaAxis(ge.getLhs(), s) == rows && iotaAxis(ge.getRhs(), s) == cols;
  if (auto le = dyn_cast_or_null<LeOp>(cond))
    return iotaAxis(le.getLhs(), s) == cols && iotaAxis(le.getRhs(), s) == rows;
  return false;
}

} // namespace

bool reducesLastAxis(Operation *op) {
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  auto keep = op->getAttrOfType<BoolAttr>("keepdims");
  int64_t rank = static_cast<int64_t>(shapeOf(op->getOperand(0)).size());
  return axes && keep && keep.getValue() && axes.asArrayRef().size() == 1 &&
         axes.asArrayRef()[0] == rank - 1;
}

std::optional<ScoresChain> scoresChain(Value logits) {
  ArrayRef<int64_t> sShape = shapeOf(logits);
  ScoresChain c;
  std::vector<Operation *> chain;  // from the scores to the logits
  llvm::SmallPtrSet<Operation *, 16> inChain;
  std::vector<Value> work{logits};
  while (!work.empty()) {
    Value v = work.back();
    work.pop_back();
    Operation *d = v.getDefiningOp();
    if (!d || isView(d) || isGenerator(d))
      continue;
    if (auto mm = dyn_cast<MatmulOp>(d)) {
      if (c.scores && c.scores != mm)
        return std::nullopt;
      c.scores = mm;
      continue;
    }
    // Other ops are what the chain reads (a mask, index math): side inputs.
    if (!isElementwise(d) || d->getNumResults() != 1 || shapeOf(d->getResult(0)) != sShape)
      continue;
    if (!inChain.insert(d).second)
      continue;
    chain.push_back(d);
    for (Value o : d->getOperands())
      work.push_back(o);
  }
  if (!c.scores || shapeOf(c.scores.getResult()) != sShape)
    return std::nullopt;
  // Ops of the chain that do not depend on the scores are index math (a
  // causal mask from iotas) or read inputs: addSideOps decides which of
  // them the group computes.
  Value scores = c.scores.getResult();
  std::sort(chain.begin(), chain.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SmallPtrSet<Operation *, 16> onScores;
  for (Operation *op : chain)
    if (llvm::any_of(op->getOperands(), [&](Value o) {
          return o == scores || (o.getDefiningOp() && onScores.count(o.getDefiningOp()));
        })) {
      onScores.insert(op);
      c.onScores.push_back(op);
    }
  return c;
}

void addSideOps(std::vector<Operation *> &group, ArrayRef<Operation *> onScores) {
  // Elementwise ops on iotas and inputs that the chain reads and the group
  // alone reads (a causal mask's comparison), and theirs in turn; the
  // others' results are inputs of the group.
  std::vector<Operation *> readers(onScores.begin(), onScores.end());
  for (size_t i = 0; i < readers.size(); ++i)
    for (Value o : readers[i]->getOperands()) {
      Operation *d = computeDef(o);
      if (!d || llvm::is_contained(group, d) || isa<MatmulOp>(d) || !isElementwise(d) ||
          d->getNumResults() != 1)
        continue;
      if (llvm::all_of(d->getUsers(), [&](Operation *u) { return llvm::is_contained(group, u); })) {
        group.push_back(d);
        readers.push_back(d);
      }
    }
}

std::optional<AttentionMatch> matchAttention(Operation *op, std::string &why) {
  why.clear();
  auto output = dyn_cast<MatmulOp>(op);
  if (!output)
    return std::nullopt;
  // P = e / sum(e), e = exp(x - max(x)), over the last axis; computed in
  // f32 and cast to the product's dtype where the model upcasts its softmax.
  Value probs = output.getLhs();
  auto probsCast = probs.getDefiningOp<CastOp>();
  if (probsCast)
    probs = probsCast.getInput();
  auto div = probs.getDefiningOp<DivOp>();
  if (!div)
    return std::nullopt;
  auto sum = div.getRhs().getDefiningOp<SumOp>();
  auto exp = div.getLhs().getDefiningOp<ExpOp>();
  if (!sum || !exp || sum.getInput() != exp.getResult() || !reducesLastAxis(sum))
    return std::nullopt;
  auto sub = exp.getInput().getDefiningOp<SubOp>();
  if (!sub)
    return std::nullopt;
  auto max = sub.getRhs().getDefiningOp<MaxOp>();
  Value logits = sub.getLhs();
  if (!max || max.getInput() != logits || !reducesLastAxis(max))
    return std::nullopt;
  // The logits come from one product through elementwise ops of its shape.
  ArrayRef<int64_t> sShape = shapeOf(logits);
  if (sShape.size() < 2 || shapeOf(div.getResult()) != sShape)
    return std::nullopt;
  std::optional<ScoresChain> chain = scoresChain(logits);
  if (!chain)
    return std::nullopt;
  AttentionMatch m;
  m.scores = chain->scores;
  std::vector<Operation *> group{m.scores, max, sub, exp, sum, div, output};
  if (probsCast)
    group.push_back(probsCast);
  group.insert(group.end(), chain->onScores.begin(), chain->onScores.end());
  addSideOps(group, chain->onScores);
  // Every value computed inside stays inside: S and P never reach memory.
  for (Operation *g : group)
    if (g != output.getOperation())
      for (Operation *u : g->getUsers())
        if (!llvm::is_contained(group, u))
          return std::nullopt;
  std::sort(group.begin(), group.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  m.output = output;
  m.logits = logits;
  if (output->hasOneUse())
    if (auto t = dyn_cast<TransposeOp>(*output->getUsers().begin())) {
      ArrayRef<int64_t> perm = t.getPerm();
      if (perm.back() == static_cast<int64_t>(perm.size()) - 1 &&
          !llvm::equal(perm, llvm::seq<int64_t>(0, static_cast<int64_t>(perm.size()))))
        m.outTranspose = t;
    }
  m.causal = isCausal(logits);
  m.ops = std::move(group);

  // What the kernel takes: 16-bit Q, K and V of one dtype, read in place or
  // from the copies outlining makes (Q and V with the head dim contiguous,
  // K with the head dim or the keys contiguous), head dims that are a
  // multiple of 16 up to 128, the same batch dims for both products.
  auto decline = [&](std::string reason) -> std::optional<AttentionMatch> {
    why = "the attention kernel " + reason;
    return std::nullopt;
  };
  Value q = m.scores.getLhs(), kt = m.scores.getRhs(), v = output.getRhs();
  DType dt = dtypeOf(q);
  if (!isHalf(dt) || dtypeOf(kt) != dt || dtypeOf(v) != dt)
    return decline("takes bf16 or f16 queries, keys and values of one dtype");
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(kt), vs = shapeOf(v), os = shapeOf(output);
  if (qs.size() < 2 || ks.size() < 2 || vs.size() < 2 || os.size() != sShape.size())
    return decline("takes matrices of queries, keys and values");
  std::vector<int64_t> batch = matmulBatchShape(m.scores);
  if (batch != matmulBatchShape(output))
    return decline("takes products over the same batch dims");
  m.queries = sShape.end()[-2];
  m.keys = sShape.back();
  m.headDim = qs.back();
  for (int64_t b : batch)
    m.batch *= b;
  if (vs.back() != m.headDim)
    return decline("takes values of the queries' head dim (" + std::to_string(m.headDim) + ")");
  if (m.headDim % 16 != 0 || m.headDim > kAttentionMaxHeadDim)
    return decline("takes head dims that are a multiple of 16 up to " +
                   std::to_string(kAttentionMaxHeadDim) + " (this one is " +
                   std::to_string(m.headDim) + ")");
  if (m.batch > 65535)
    return decline("takes at most 65535 heads and batches");
  // K and V through a grouped-query repeat, or (decode) in the pieces of a
  // cache joined with this step's rows, are read in place; other layouts
  // through one strided view or the copy outlining makes.
  m.kIn = attentionOperand(kt, batch, true, m.decode());
  m.vIn = attentionOperand(v, batch, false, m.decode());
  if (m.kIn && m.vIn && m.kIn->repeat == m.vIn->repeat)
    m.repeat = m.kIn->repeat;
  MatrixLayoutView lq = matmulOperandLayoutAsRead(q, batch, 'r');
  MatrixLayoutView lk = matmulOperandLayoutAsRead(kt, batch, 'c');
  MatrixLayoutView lv = matmulOperandLayoutAsRead(v, batch, 'c');
  // (attentionOperand's pieces are rows of keys, the head dim contiguous and
  // aligned.)
  if (m.vIn)
    lv = m.vIn->pieces.front().layout;
  if (!lq.rowMajor || !lv.rowMajor)
    return decline("reads queries and values with the head dim contiguous");
  if (!alignedFor16ByteCopies(lq) || (!m.kIn && !alignedFor16ByteCopies(lk)) ||
      (!m.vIn && !alignedFor16ByteCopies(lv)))
    return decline("reads rows in 16-byte copies (rows, strides and offsets of 8 elements)");
  m.keysContiguous = !m.kIn && lk.rowMajor;
  if (m.decode() && m.keysContiguous)
    return decline("takes keys with the head dim contiguous where fewer than " +
                   std::to_string(kDecodeQueries) + " query rows split the keys over blocks");
  // A join read in pieces belongs to the group: the joined cache is never
  // written.
  for (const std::optional<AttentionOperand> &in : {m.kIn, m.vIn})
    if (in && in->concat)
      m.ops.push_back(in->concat);
  std::sort(m.ops.begin(), m.ops.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return m;
}

AttentionTiles attentionTiles(const AttentionMatch &m, const DeviceProfile &profile) {
  AttentionTiles t;
  const int64_t D = m.headDim;
  if (m.decode()) {
    // 16 rows a block (the query rows of the heads sharing K and V), 64 keys
    // a step over 4 warps, three buffers of keys and values in flight.
    t.decode = true;
    t.rows = 16;
    t.keys = kAttentionKeys;
    const int64_t ld = D + 8;
    // Three buffers where they fit (head dims up to 128; 256 on Hopper),
    // else two.
    for (t.stages = 3; t.stages > 2; --t.stages)
      if ((t.rows * ld + t.stages * 2 * t.keys * ld) * 2 <= profile.smemPerBlock)
        break;
    t.sharedBytes = (t.rows * ld + t.stages * 2 * t.keys * ld) * 2;
    t.blocksPerSm = std::clamp<int64_t>((profile.smemPerBlock + 1024) / (t.sharedBytes + 1024), 1, 4);
    // Splits of the keys: the count the price is least at (more splits
    // bring more SMs to stream; each costs a partial and a share of the
    // merge). The last block keeps every split's factor for 16 rows in the
    // buffers' shared memory.
    const int64_t keyTiles = (m.keys + t.keys - 1) / t.keys;
    const int64_t maxSplits = (t.stages * 2 * t.keys * ld * 2 / 4 - 16) / 16;
    double best = 0;
    AttentionTiles trial = t;
    for (int64_t s = 1; s <= std::min(keyTiles, maxSplits); ++s) {
      const int64_t per = (keyTiles + s - 1) / s;
      if ((keyTiles + per - 1) / per != s)
        continue;  // the same blocks as fewer splits
      trial.splits = s;
      trial.splitTiles = per;
      const double seconds = decodeAttentionSeconds(m, trial, profile);
      if (best == 0 || seconds < best) {
        best = seconds;
        t.splits = s;
        t.splitTiles = per;
      }
    }
    return t;
  }
  if (profile.arch == "sm_90a" && profile.wgmmaFlopsPerSec > 0 &&
      !m.keysContiguous && (D == 64 || D == 128)) {
    // A warpgroup's S (64 x 128 fp32) and O (64 x D) stay in registers: one
    // block of two warpgroups an SM.
    t.wgmma = true;
    t.keys = 2 * kAttentionKeys;
    t.blocksPerSm = 1;
    t.sharedBytes = (t.rows * D + 4 * t.keys * D) * 2 + 1024;
    return t;
  }
  const int64_t ld = D + 8;
  auto bytes = [&] {
    const int64_t keyTile = m.keysContiguous ? D * (t.keys + 8) : t.keys * ld;
    return (t.rows * ld + 2 * keyTile + 2 * t.keys * ld) * 2;
  };
  if (D > 128) {
    // A warp's output rows take D / 2 registers a thread: one block an SM,
    // of 128 query rows and 64 keys a tile where those fit in shared memory
    // (Hopper), else 64 rows and 32 keys (sm_80).
    t.blocksPerSm = 1;
    if (bytes() > profile.smemPerBlock) {
      t.rows = kAttentionRows / 2;
      t.keys = kAttentionKeys / 2;
    }
  }
  t.sharedBytes = bytes();
  return t;
}

namespace {
// The decode form's price, fitted to 14 split counts of two H200 cases
// (bench/NOTES.md, "the decode split count": 8 K/V heads over 4097 and 8192
// keys, 4 to 128 splits; within 4.2%). An SM streams a tile per 2.5 us /
// stages (its buffers' loads in flight; blocks sharing an SM share that
// rate); where the keys are split, the last block's wait and merge cost
// 1.8 us and every split 0.11 us more (its partial stored and read back, a
// pipeline that starts empty).
constexpr double kDecodeRoundTripSeconds = 2.5e-6;
constexpr double kDecodeMergeSeconds = 1.8e-6;
constexpr double kDecodePerSplitSeconds = 0.11e-6;
} // namespace

double decodeAttentionSeconds(const AttentionMatch &m, const AttentionTiles &t,
                              const DeviceProfile &p) {
  const int64_t entries = m.batch / m.repeat;
  const int64_t rowTiles = m.rowTiles(t);
  const double rows = static_cast<double>(std::min<int64_t>(16, m.repeat * m.queries));
  const double kv = 2.0 * double(entries * rowTiles) * double(m.keys * m.headDim) * 2.0;
  double bytes = kv + 2.0 * double(m.batch * m.queries * m.headDim) * 2.0;
  if (t.splits > 1)
    bytes += 2.0 * double(entries * rowTiles * t.splits) * rows * double(m.headDim + 2) * 4.0;
  const double stream = bytes / (p.hbmBytesPerSec * p.gemvBandwidthFraction);
  // The blocks spread evenly over the SMs; the busiest streams its blocks'
  // tiles one after another at its own rate.
  const int64_t blocks = entries * rowTiles * t.splits;
  const int64_t sms = std::max(1, p.smCount);
  const int64_t perSm = (blocks + sms - 1) / sms;
  const double sm = double(perSm * std::max<int64_t>(1, t.splitTiles)) *
                    kDecodeRoundTripSeconds / double(t.stages);
  const double tensor = 4.0 * 16.0 * double(rowTiles * entries) * double(m.keys * m.headDim) /
                        (p.gemmFlopsPerSec * kAttentionMmaShare);
  const double splits =
      t.splits > 1 ? kDecodeMergeSeconds + kDecodePerSplitSeconds * double(t.splits) : 0.0;
  return std::max({stream, sm, tensor}) + splits + p.launchSeconds;
}

int64_t AttentionMatch::rowTiles(const AttentionTiles &t) const {
  const int64_t rows = t.decode ? repeat * queries : queries;
  return (rows + t.rows - 1) / t.rows;
}

std::vector<int64_t> AttentionMatch::keyTilesPerBlock(const AttentionTiles &t) const {
  int64_t keyTiles = (keys + t.keys - 1) / t.keys;
  int64_t queryTiles = (queries + t.rows - 1) / t.rows;
  std::vector<int64_t> tiles;
  for (int64_t q = 0; q < queryTiles; ++q)
    tiles.push_back(causal ? std::min(keyTiles, (q * t.rows + t.rows - 1) / t.keys + 1)
                           : keyTiles);
  return tiles;
}

double AttentionMatch::computedShare(const AttentionTiles &t) const {
  if (t.decode)
    return 1.0;  // every key of every split
  int64_t keyTiles = (keys + t.keys - 1) / t.keys;
  std::vector<int64_t> tiles = keyTilesPerBlock(t);
  if (keyTiles == 0 || tiles.empty())
    return 1.0;
  int64_t computed = 0;
  for (int64_t n : tiles)
    computed += n;
  return static_cast<double>(computed) / static_cast<double>(keyTiles * int64_t(tiles.size()));
}

bool isAttentionGroup(ArrayRef<Operation *> ops) {
  std::vector<Operation *> mms;
  for (Operation *op : ops)
    if (isa<MatmulOp>(op))
      mms.push_back(op);
  if (mms.size() != 2)
    return false;
  std::string why;
  std::optional<AttentionMatch> m = matchAttention(mms.back(), why);
  if (!m || m->ops.size() != ops.size())
    return false;
  return llvm::all_of(ops, [&](Operation *op) { return llvm::is_contained(m->ops, op); });
}

} // namespace fusec
