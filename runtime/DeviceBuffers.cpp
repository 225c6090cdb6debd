//===- DeviceBuffers.cpp - host tensors in device memory, for one call ----===//
#include "runtime/DeviceBuffers.h"

#include "compiler/support/Printable.h"

#include <algorithm>

namespace fusec {

DeviceBuffers::~DeviceBuffers() {
  for (CUdeviceptr ptr : ptrs)
    drv.cuMemFree(ptr);
}

rt::Error DeviceBuffers::upload(const std::vector<HostTensor> &tensors) {
  for (const HostTensor &t : tensors) {
    CUdeviceptr ptr = 0;
    size_t bytes = std::max<size_t>(16, t.nbytes());
    if (rt::Error err = drv.check(drv.cuMemAlloc(&ptr, bytes), "cuMemAlloc"))
      return err;
    ptrs.push_back(ptr);
    sizes.push_back(t.nbytes());
    if (t.nbytes() > 0)
      if (rt::Error err = drv.check(drv.cuMemcpyHtoD(ptr, t.data(), t.nbytes()), "cuMemcpyHtoD"))
        return err;
  }
  return rt::Error::success();
}

rt::Error DeviceBuffers::allocatePoisoned(const std::vector<TensorSpec> &specs) {
  for (const TensorSpec &s : specs) {
    CUdeviceptr ptr = 0;
    size_t bytes = std::max<int64_t>(16, s.bytes());
    if (rt::Error err = drv.check(drv.cuMemAlloc(&ptr, bytes), "cuMemAlloc"))
      return err;
    ptrs.push_back(ptr);
    sizes.push_back(s.bytes());
    if (rt::Error err = drv.check(drv.cuMemsetD8Async(ptr, 0xFF, bytes, nullptr), "cuMemsetD8"))
      return err;
  }
  return rt::Error::success();
}

rt::Error DeviceBuffers::download(std::vector<HostTensor> &out,
                                  const std::vector<TensorSpec> &specs) const {
  out.clear();
  for (size_t i = 0; i < specs.size(); ++i) {
    HostTensor t(specs[i].dtype, specs[i].shape);
    if (t.nbytes() > 0)
      if (rt::Error err = drv.check(drv.cuMemcpyDtoH(t.data(), ptrs[i], t.nbytes()),
                                    "cuMemcpyDtoH"))
        return err;
    out.push_back(std::move(t));
  }
  return rt::Error::success();
}

rt::Error runOnHostTensors(Executable &exe, CudaDriver &drv, const std::vector<HostTensor> &inputs,
                           std::vector<HostTensor> &outputs, bool replay) {
  const PlanDesc &plan = exe.plan();
  // Every input, or those left once weights are bound.
  std::vector<size_t> passed = exe.passedInputs(inputs.size());
  if (passed.size() != inputs.size())
    return rt::errorf("the graph takes %zu inputs (or those not bound), %zu were given",
                      plan.inputs.size(), inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorSpec &spec = plan.inputs[passed[k]];
    if (inputs[k].dtype() != spec.dtype || inputs[k].shape() != spec.shape)
      return rt::errorf("input %zu ('%s') has another dtype or shape than the graph's", passed[k],
                        printable(spec.name).c_str());
  }
  if (rt::Error err = exe.makeCurrent())  // before the buffers' allocations
    return err;
  DeviceBuffers in(drv), out(drv);
  if (rt::Error err = in.upload(inputs))
    return err;
  if (rt::Error err = out.allocatePoisoned(plan.outputs))
    return err;
  if (rt::Error err = exe.poisonArena(nullptr))
    return err;
  if (rt::Error err = replay ? exe.replay(in.pointers(), out.pointers(), nullptr)
                             : exe.enqueue(in.pointers(), out.pointers(), nullptr))
    return err;
  if (rt::Error err = drv.check(drv.cuCtxSynchronize(), "running the graph"))
    return err;
  return out.download(outputs, plan.outputs);
}

} // namespace fusec
