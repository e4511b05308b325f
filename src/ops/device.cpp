// Devices in a build without CUDA: asking for one is a clear error (src/cuda/ops_cuda.cu
// defines these in a CUDA build).
#if !ATTNLITE_HAVE_CUDA
#include <string>

#include "attnlite/error.h"
#include "attnlite/ops/ops.h"
#include "attnlite/device.h"

namespace attnlite {

bool cuda_available() { return false; }
std::string cuda_device_name() { return "none (attnlite was built without CUDA)"; }

namespace ops {
const Ops& cuda() { throw Error("attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)"); }
}  // namespace ops

}  // namespace attnlite
#endif
