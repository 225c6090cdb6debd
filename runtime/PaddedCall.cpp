//===- PaddedCall.cpp - a call of a plan compiled at padded sizes ---------===//
#include "runtime/PaddedCall.h"

#include "compiler/support/Printable.h"
#include "runtime/DeviceBuffers.h"

namespace fusec {

rt::Error enqueuePadded(Executable &exe, PaddedBuffers &b, const PaddedCallSpecs &call,
                        const std::vector<bool> &parameters, bool weightsBound,
                        const std::vector<bool> &inputPadded, const std::vector<uint64_t> &in,
                        const std::vector<uint64_t> &out, CUstream stream, bool asGraph) {
  const PlanDesc &plan = exe.plan();
  const PaddedSignature &sig = plan.padding;
  // Every input, or (weights bound) those that are not parameters.
  size_t passedCount = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    passedCount += !(i < parameters.size() && parameters[i]);
  const bool onlyPassed = weightsBound && in.size() == passedCount && passedCount != call.inputs.size();
  if (in.size() != call.inputs.size() && !onlyPassed)
    return rt::errorf("the graph takes %zu inputs (or those not bound), %zu were given",
                      call.inputs.size(), in.size());
  if (out.size() != plan.outputs.size())
    return rt::errorf("the graph has %zu outputs, %zu were given", plan.outputs.size(),
                      out.size());
  if (rt::Error err = exe.makeCurrent())
    return err;
  std::vector<CUdeviceptr> ins(plan.inputs.size(), 0), outs(plan.outputs.size(), 0);
  size_t k = 0, c = 0;  // the caller's next input; the next of call.inputs
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const TensorSpec &padded = plan.inputs[i];
    if (i < sig.sizeArgs.size() && !sig.sizeArgs[i].empty()) {
      auto size = call.sizes.find(sig.sizeArgs[i]);
      if (size == call.sizes.end())
        return rt::errorf("no size given for '%s'", printable(sig.sizeArgs[i]).c_str());
      auto buf = b.input(i, padded);
      if (!buf)
        return buf.takeError();
      if (rt::Error err = b.setSize(*buf, int32_t(size->second), stream))
        return err;
      ins[i] = *buf;
      continue;
    }
    if (c >= call.inputs.size())
      return rt::errorf("the plan takes more inputs than its calls pass");
    const bool inPlace = c < inputPadded.size() && inputPadded[c];
    const TensorSpec &given = call.inputs[c++];
    if (onlyPassed && i < parameters.size() && parameters[i])
      continue;  // bound
    if (k >= in.size())
      return rt::errorf("the graph takes more inputs than the %zu given", in.size());
    CUdeviceptr from = CUdeviceptr(in[k++]);
    if (given.shape == padded.shape || !from || inPlace) {
      ins[i] = from;
      continue;
    }
    auto buf = b.input(i, padded);
    if (!buf)
      return buf.takeError();
    if (rt::Error err =
            b.pad(from, given.shape, *buf, padded.shape, dtypeBytes(padded.dtype), stream))
      return rt::errorf("input %zu ('%s'): %s", c - 1, printable(given.name).c_str(),
                        err.message().c_str());
    ins[i] = *buf;
  }
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    if (call.outputs[o].shape == plan.outputs[o].shape) {
      outs[o] = CUdeviceptr(out[o]);
      continue;
    }
    auto buf = b.output(o, plan.outputs[o]);
    if (!buf)
      return buf.takeError();
    outs[o] = *buf;
  }
  if (rt::Error err = asGraph ? exe.replay(ins, outs, stream) : exe.enqueue(ins, outs, stream))
    return err;
  for (size_t o = 0; o < plan.outputs.size(); ++o)
    if (outs[o] != CUdeviceptr(out[o]))
      if (rt::Error err = b.crop(outs[o], plan.outputs[o].shape, CUdeviceptr(out[o]),
                                 call.outputs[o].shape, dtypeBytes(plan.outputs[o].dtype), stream))
        return rt::errorf("output %zu ('%s'): %s", o, printable(call.outputs[o].name).c_str(),
                          err.message().c_str());
  return rt::Error::success();
}

rt::Error runPaddedOnHost(Executable &exe, CudaDriver &drv, const PaddedCallSpecs &call,
                          const std::vector<bool> &parameters, bool weightsBound,
                          const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                          bool asGraph, bool &inputsWrong) {
  inputsWrong = false;
  const PaddedSignature &sig = exe.plan().padding;
  // With weights bound, the calls pass the other inputs only.
  std::vector<bool> skip;
  if (weightsBound && inputs.size() < call.inputs.size())
    skip = parameters;
  auto args = padInputs(sig, inputs, call.sizes, skip);
  if (!args) {
    inputsWrong = true;
    return args.takeError();
  }
  std::vector<HostTensor> padded;
  if (rt::Error err = runOnHostTensors(exe, drv, *args, padded, asGraph))
    return err;
  outputs = cropOutputs(sig, padded, call.sizes);
  return rt::Error::success();
}

rt::Error bindWeightsOfAnotherCompile(Executable &exe, std::vector<CUdeviceptr> weights) {
  weights.resize(exe.plan().inputs.size(), 0);  // the size arguments are passed per call
  return exe.bindInputs(std::move(weights));
}

rt::Error setInputPaddedFlag(std::vector<bool> &flags, size_t callInputs, size_t i, bool padded) {
  if (i >= callInputs)
    return rt::errorf("setInputPadded: input %zu of %zu", i, callInputs);
  flags.resize(callInputs, false);
  flags[i] = padded;
  return rt::Error::success();
}

} // namespace fusec
