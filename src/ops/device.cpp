// Devices: the names of the weights' precisions, and, in a build without CUDA, the CUDA
// entry points, where asking for a device is a clear error (src/cuda/ops_cuda.cu defines them
// in a CUDA build).
#include <cstring>
#include <string>

#include "attnlite/device.h"
#include "attnlite/error.h"
#include "attnlite/ops/ops.h"

namespace attnlite {

const char* precision_name(Precision p) { return p == Precision::BF16 ? "bf16" : "fp32"; }

bool parse_precision(const char* name, Precision* out) {
  if (!name) return false;
  if (std::strcmp(name, "fp32") == 0) return *out = Precision::F32, true;
  if (std::strcmp(name, "bf16") == 0) return *out = Precision::BF16, true;
  return false;
}

#if !ATTNLITE_HAVE_CUDA
bool cuda_available() { return false; }
std::string cuda_device_name() { return "none (attnlite was built without CUDA)"; }
void cuda_start_up() {}

namespace ops {
const Ops& cuda(bool) { throw Error("attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)"); }
}  // namespace ops
#endif

}  // namespace attnlite
