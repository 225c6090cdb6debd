// Compiles against fusec's public header from a parent project, with only
// fusec's include/ on the include path: the public headers stand alone.
#include <fusec/fusec.h>

int parentUsesFusec() {
  fusec::Options options;
  fusec::TensorSpec spec{"x", fusec::DType::BF16, {2, 3}};
  fusec::HostTensor t(spec.dtype, spec.shape);
  return options.fuse && t.nbytes() == spec.bytes() ? 1 : 0;
}
