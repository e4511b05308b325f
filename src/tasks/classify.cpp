// A classifier is the Vision Transformer driver + softmax: the session block (sized by the
// code that carves it) and the Classification views.
#include "attnlite/classify.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "attnlite/attention/rollout.h"
#include "attnlite/error.h"
#include "drivers/image_driver.h"
#include "tasks/session.h"

namespace attnlite {

namespace {

const Model& vit_of(const std::shared_ptr<const Model>& m) {
  if (!m) throw Error("Classifier needs a model");
  require_task(*m, Task::Classify);
  return *m;
}

// An image of the batch refused: "image I: reason", I from 0.
ItemError item_error(int i, const std::string& reason) {
  return ItemError("image " + std::to_string(i), i, reason);
}

}  // namespace

struct Classifier::Impl {
  const Model& m;
  const ops::Ops& op;
  std::unique_ptr<drivers::ImageDriver> driver_;
  drivers::ImageDriver& driver;
  int B = 1, K = 0, T = 0, L = 0, NH = 1;

  // host
  float* probs = nullptr;       // (B, K)
  float* logits = nullptr;      // (B, K) when op memory is not the host's
  float* host_attn = nullptr;   // likewise (L, B, NH, T, T)
  double* roll = nullptr;       // (2, T, T) rollout products
  double* layer = nullptr;      // (T, T)
  std::vector<Classification> results;
  int n = 0;
  bool attention = false;

  size_t scratch_bytes = 0;
  SessionMemory memory;
  Arena scratch;

  Impl(const Model& model, const ClassifyLimits& lim)
      : m(model), op(ops_for(lim.device, lim.precision)), driver_(family_model(model).image_driver(op, check_batch(lim.max_batch))), driver(*driver_) {
    B = lim.max_batch;
    K = (int)m.labels().size();
    T = m.num_steps();
    L = m.num_layers();
    NH = m.num_heads();
    scratch_bytes = measure_scratch();
    memory.measure(op, [this](Arena& host, Arena& mem) { carve(host, mem); });
  }

  static int check_batch(int b) {
    if (b < 1 || b > 4096) throw Error("limits: max_batch must be in [1, 4096], got " + std::to_string(b));
    return b;
  }

  // The scratch of a whole batch.
  size_t measure_scratch() {
    return attnlite::measure_scratch([this](Arena& none) { driver.carve(none); },
                                     [this](const ops::Ctx& cx, bool att) { driver.forward(nullptr, B, att, cx); });
  }

  void carve(Arena& host, Arena& mem) {
    probs = host.floats((size_t)B * K);
    roll = host.take<double>((size_t)2 * T * T);
    layer = host.take<double>((size_t)T * T);
    if (!op.host_memory()) {
      logits = host.floats((size_t)B * K);
      host_attn = host.floats((size_t)driver.attention_len());
    }
    driver.carve(mem);
    scratch = Arena(mem.take<char>(scratch_bytes), scratch_bytes);
  }

  void bind(void* block, size_t bytes) {
    memory.bind(op, block, bytes, "these limits need", [this](Arena& host, Arena& mem) { carve(host, mem); });
    results.assign((size_t)B, Classification{});
  }

  void classify(const float* images, int count, bool att) {
    if (count < 1 || count > B)
      throw Error("batch of " + std::to_string(count) + " images is outside [1, max_batch = " +
                  std::to_string(B) + "]");
    if (!images) throw Error("classify: images is null");
    const long per = driver.image_floats();
    for (long i = 0; i < per * count; ++i)
      if (!std::isfinite(images[i]))
        throw item_error((int)(i / per), "pixel " + std::to_string(i % per) + " is not a finite number");
    const ops::Ctx cx{op, scratch};
    const float* z = driver.forward(images, count, att, cx);
    if (!op.host_memory()) {
      op.download(logits, z, sizeof(float) * (size_t)count * K);
      z = logits;
    }
    const float* a = att ? driver.attention() : nullptr;
    if (att && host_attn) {
      op.download(host_attn, a, sizeof(float) * (size_t)driver.attention_len());
      a = host_attn;
    }
    op.sync();
    // Finite but huge pixels can overflow inside the model (a patch embedding of inf, then NaN
    // scores): refuse rather than hand out NaN logits or attention maps.
    for (int b = 0; b < count; ++b) {
      bool finite = true;
      for (int k = 0; k < K; ++k) finite = finite && std::isfinite(z[(long)b * K + k]);
      for (int l = 0; a && finite && l < L; ++l) {
        const float* ab = a + (long)l * B * NH * T * T + (long)b * NH * T * T;
        for (long j = 0; j < (long)NH * T * T; ++j) finite = finite && std::isfinite(ab[j]);
      }
      if (!finite) {
        n = 0;  // the buffers the last results pointed at were overwritten
        throw item_error(b, "the model's activations overflowed (not finite): "
                            "the pixel values are far outside the model's range");
      }
    }
    n = count;
    attention = att;
    for (int b = 0; b < count; ++b) {
      const float* zb = z + (long)b * K;
      float* p = probs + (long)b * K;
      int best = 0;
      for (int k = 1; k < K; ++k)
        if (zb[k] > zb[best]) best = k;
      double s = 0;
      for (int k = 0; k < K; ++k) s += std::exp((double)zb[k] - zb[best]);
      for (int k = 0; k < K; ++k) p[k] = (float)(std::exp((double)zb[k] - zb[best]) / s);
      Classification& r = results[(size_t)b];
      r = Classification{};
      r.label = best;
      r.prob = p[best];
      r.probs = p;
      r.logits = zb;
      r.layers = L;
      r.heads = NH;
      r.tokens = T;
      r.layer_stride = (long)B * NH * T * T;
      r.attn = a ? a + (long)b * NH * T * T : nullptr;
    }
  }

  void rollout(int i, float* out) const {
    if (i < 0 || i >= n) throw Error("rollout: image index out of range");
    if (!attention) throw Error("rollout: the last call did not record attention");
    const Classification& r = results[(size_t)i];
    const double* R = attention::rollout(
        roll, roll + (long)T * T, layer, L, NH, T,
        [&](int l, int h, int q, int k) { return r.attn_at(l, h, q, k); }, [](int, const double*) {});
    for (long j = 0; j < (long)T * T; ++j) out[j] = (float)R[j];
  }
};

size_t Classifier::required_bytes(const Model& model, const ClassifyLimits& limits) {
  if (model.task() != Task::Classify) throw Error("required_bytes: not a vision transformer");
  Impl impl(model, limits);
  return impl.memory.need;
}

Classifier::Classifier(std::shared_ptr<const Model> model, const ClassifyLimits& limits,
                       void* block, size_t block_bytes)
    : model_(std::move(model)), limits_(limits) {
  impl_ = std::make_unique<Impl>(vit_of(model_), limits_);
  impl_->bind(block, block_bytes);
}

Classifier::~Classifier() = default;

void Classifier::classify(const float* images, int n, bool attention) {
  impl_->classify(images, n, attention);
}
const Classification& Classifier::result(int i) const {
  if (i < 0 || i >= impl_->n) throw Error("result index out of range");
  return impl_->results[(size_t)i];
}
void Classifier::rollout(int i, float* out) const { impl_->rollout(i, out); }
int Classifier::image_size() const { return impl_->driver.image_size(); }
int Classifier::channels() const { return impl_->driver.channels(); }
int Classifier::num_classes() const { return impl_->K; }
int Classifier::tokens() const { return impl_->T; }
size_t Classifier::workspace_bytes() const { return impl_->memory.need; }

}  // namespace attnlite
