// attnlite — where a session runs. Every session (Translator, Generator, Classifier) takes a
// Device in its limits: its op set (ops/ops.h) and where its memory lives. A session makes
// all of its memory when it is constructed (one host block, which the caller may hand in, and
// on a device one block of device memory and one copy of the weights) and allocates nothing
// after.
#pragma once
#include <string>

namespace attnlite {

// CUDA needs a build with -DATTNLITE_CUDA=ON and a device; tokenizing, the search bookkeeping
// and the results stay on the host.
enum class Device { CPU, CUDA };

// True in a CUDA build when cudaGetDeviceCount reports at least one device; false in a
// CPU build. cuda_device_name() names device 0, or says why there is none.
bool cuda_available();
std::string cuda_device_name();

}  // namespace attnlite
