// attnlite — what every session (Translator, Generator, Classifier) does with its memory
// (internal): the op set of a Device, the sizes of its blocks measured by the code that carves
// them, and the blocks themselves: the host block (the caller's, checked, or its own) and, on a
// device, one block of op memory.
#pragma once
#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include "attnlite/arena.h"
#include "attnlite/device.h"
#include "attnlite/error.h"
#include "drivers/op_memory.h"
#include "families/families.h"
#include "model/model_impl.h"

namespace attnlite {

// The loaded family of a model: its config, weights and drivers (src/families).
inline const families::FamilyModel& family_model(const Model& m) { return *m.impl().model; }

// Throws unless the model does `task`, saying what it does instead and which families do the
// task, e.g. "this is a language model (kind lm): it generates text (Generator, `attnlite
// generate`), it does not translate".
inline void require_task(const Model& m, Task task) {
  const families::Family& f = *m.impl().family;
  if (f.task == task) return;
  static const char* const does[] = {"it translates (Translator, `attnlite translate`)",
                                     "it generates text (Generator, `attnlite generate`)",
                                     "it classifies images (Classifier, `attnlite classify`)"};
  std::string kinds;
  for (const families::Family* g : families::all())
    if (g->task == task) kinds += std::string(kinds.empty() ? "" : " or ") + g->name;
  const std::string needs =
      task == Task::Translate ? ", it does not translate"
      : task == Task::Generate ? "; generating text needs a language model (kind " + kinds + ")"
                               : "; classifying images needs a vision transformer (kind " + kinds + ")";
  throw Error(std::string("this is a ") + f.what + ": " + does[(int)f.task] + needs);
}

// The op set of a session's device and weights' precision (Limits::device, ::precision).
inline const ops::Ops& ops_for(Device d, Precision p) {
  if (p != Precision::F32 && p != Precision::BF16) throw Error("limits: unknown precision");
  if (d == Device::CPU) {
    if (p != Precision::F32)
      throw Error("limits: bf16 weights are a CUDA option (device cuda); the CPU reads its "
                  "weights as stored (precision fp32)");
    return ops::cpu();
  }
  if (d == Device::CUDA) return ops::cuda(p == Precision::BF16);
  throw Error("limits: unknown device");
}

// The scratch of a session's largest calls, measured rather than written down: carve(none)
// gives the driver placeholder buffers, then run(cx, attention) makes those calls with the
// dry-run op set (every op does nothing) on a counting arena, with and without attention (the
// CPU attention takes scratch for the scores it does not record); the peak.
template <class Carve, class Run>
size_t measure_scratch(Carve&& carve, Run&& run) {
  size_t peak = 0;
  for (bool attention : {false, true}) {
    Arena none, count;
    carve(none);
    run(ops::Ctx{ops::counting(), count}, attention);
    peak = std::max(peak, count.peak());
  }
  return peak;
}

struct SessionMemory {
  size_t need = 0;      // bytes of the host block (the op memory's too on the CPU)
  size_t mem_need = 0;  // bytes of the op-memory block (0 when it is the host block)
  AlignedBuffer owned;
  drivers::OpBlock mem_block;

  // carve(host, mem) takes every buffer; here on counting arenas, to size the blocks.
  template <class Carve>
  void measure(const ops::Ops& op, Carve&& carve) {
    Arena host, mem;
    carve(host, mem);
    // Each block must be one that an arena can carve (Arena::kMaxBytes: on 32-bit hosts, WASM,
    // a quarter of the address space). Each arena checks its own requests, but on the CPU both
    // are carved from one block, whose offsets would pass the limit only once it was
    // allocated: refused here, before anything is (each peak first: their sum cannot wrap).
    Arena::check_block(host.peak());
    Arena::check_block(mem.peak());
    need = op.host_memory() ? host.peak() + mem.peak() : host.peak();
    mem_need = op.host_memory() ? 0 : mem.peak();
    Arena::check_block(need);
  }

  // The host block is the caller's (checked: size, alignment) or one of its own (its
  // allocation failure names `what`, e.g. "these limits need"); then carve(host, mem) for real,
  // mem being the host block on the CPU and one block of op memory on a device.
  template <class Carve>
  void bind(const ops::Ops& op, void* block, size_t bytes, const std::string& what, Carve&& carve) {
    if (block) {
      if (bytes < need)
        throw Error("workspace block of " + std::to_string(bytes) + " bytes is too small: " +
                    std::to_string(need) + " required");
      if (reinterpret_cast<uintptr_t>(block) % Arena::kAlign)
        throw Error("workspace block must be 64-byte aligned");
    } else {
      try {
        owned = AlignedBuffer(need);
      } catch (const std::bad_alloc&) {
        throw Error("cannot allocate the " + std::to_string(need) + "-byte workspace " + what);
      }
      block = owned.data();
      bytes = need;
    }
    Arena host(block, bytes);
    if (op.host_memory()) {
      carve(host, host);
    } else {
      mem_block = drivers::OpBlock(op, mem_need);
      Arena mem(mem_block.data(), mem_block.size());
      carve(host, mem);
    }
  }
};

}  // namespace attnlite
