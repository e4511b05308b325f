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

// How a device holds a model's fp32 weights (a session's Limits::precision; docs/cuda.md):
// - F32: as stored;
// - BF16: the matrices of linear layers (attention's projections, the feed-forward layers,
//   recurrent layers, the output layer) rounded to bfloat16, half their bytes, which a
//   decoding step mostly reads; embedding tables, norms and biases stay fp32, int8 matrices
//   stay int8, and every product still adds in fp32. Tokens may differ from F32's where two
//   are close. CUDA only: the CPU reads its weights as stored.
enum class Precision { F32, BF16 };
// "fp32" / "bf16", and back (false for any other name).
const char* precision_name(Precision p);
bool parse_precision(const char* name, Precision* out);

// True in a CUDA build when cudaGetDeviceCount reports at least one device; false in a
// CPU build. cuda_device_name() names device 0, or says why there is none.
bool cuda_available();
std::string cuda_device_name();
// CUDA's start-up, before any session asks for it: the driver and device 0's context (it
// blocks until they are made, ~0.2-0.3 s), and cuBLAS's libraries, which it starts loading
// on a thread of their own without waiting. A program runs it on a thread of its own while
// it does other work (the CLI, while it reads the model); a session made meanwhile waits for
// what is still under way. Nothing in a CPU build or where there is no device (the session
// then says why).
void cuda_start_up();

}  // namespace attnlite
