// attnlite — the interface of an image classifier's driver (internal), as the classifier
// (src/tasks/classify.cpp) sees it: a batch's images, logits and attention weights in op
// memory. The Vision Transformer family implements it (src/families/vit/driver.cpp).
//
// Legend: B images (the batch limit), T tokens, NH heads, L layers, K classes.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"

namespace attnlite::drivers {

class ImageDriver {
 public:
  virtual ~ImageDriver() = default;
  virtual void carve(Arena& mem) = 0;
  // images (host, n × image_floats()) -> logits (n, K) in op memory; attention: layer l's
  // weights of image b at attention() + (l * B + b) * NH * T * T.
  virtual const float* forward(const float* images, int n, bool attention, const ops::Ctx& cx) = 0;
  virtual const float* attention() const = 0;
  virtual long attention_len() const = 0;
  virtual long image_floats() const = 0;  // C × S × S
  virtual int image_size() const = 0;     // S
  virtual int channels() const = 0;       // C
};

}  // namespace attnlite::drivers
