// The Vision Transformer family: its config (attnlite.config), weights and class names
// (attnlite.labels), checked at load.
#include "attnlite/error.h"
#include "families/vit/vit.h"
#include "file/config.h"

namespace attnlite::families {

namespace {

Loaded load_vit(const SafeTensors& st, const nlohmann::json& c, WeightStore& store) {
  auto m = std::make_unique<VisionTransformerModel>();
  models::VisionTransformerConfig& v = m->config;
  models::EncoderLayerConfig& e = v.layer;
  v.image_size = config::integer(c, "image_size", 1, 1024);
  v.patch_size = config::integer(c, "patch_size", 1, 1024);
  v.in_channels = config::integer(c, "in_channels", 1, 4);
  v.num_classes = config::integer(c, "num_classes", 1, 100000);
  v.depth = config::integer(c, "depth", 1, 64);
  e.d_model = config::integer(c, "embed_dim", 1, 8192);
  e.num_heads = config::integer(c, "num_heads", 1, 256);
  e.dim_feedforward = config::integer(c, "dim_feedforward", 1, 65536);
  e.activation = config::activation(c, ops::Act::Gelu);  // the lab's
  e.norm_first = config::boolean(c, "norm_first", false);
  e.bias = config::boolean(c, "bias", true);
  e.layer_norm_eps = config::layer_norm_eps(c);
  v.input_scale = config::positive(c, "input_scale", v.input_scale);
  if (config::boolean(c, "invert", false))
    throw Error("model config 'invert' = true is not supported (attnlite's ViT reads pixel values "
                "times input_scale)");
  if (v.patch_size > v.image_size) throw Error("model config: patch_size exceeds image_size");
  if (v.num_patches() + 1 > 4097) throw Error("model config: more than 4096 patches");
  if (e.d_model % e.num_heads) throw Error("model config: embed_dim is not a multiple of num_heads");
  m->zeros.assign((size_t)e.d_model, 0.f);
  m->store = &store;
  m->weights = m->bind(store, m->zeros.data());
  Loaded out;
  out.labels = config::strings(st, "attnlite.labels", "label");
  if ((int)out.labels.size() != v.num_classes)
    throw Error("'attnlite.labels' has " + std::to_string(out.labels.size()) +
                " labels but the config says " + std::to_string(v.num_classes) + " classes");
  out.model = std::move(m);
  return out;
}

}  // namespace

extern const Family vit{"vit", Task::Classify, "vision transformer (kind vit)", load_vit};

}  // namespace attnlite::families
