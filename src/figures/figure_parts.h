// The pieces the figure files share (src/figures/figures.cpp: the book's figures;
// src/figures/model_maps.cpp and vit_maps.cpp: the attention maps of trained models).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnlite/translate.h"
#include "attnlite/figures/figures.h"
#include "attnlite/render/heatmap.h"

namespace attnlite::figures::detail {
using namespace attnlite::render;  // figures are drawn with the renderer

// A heatmap figure: `data` holds rows x cols matrices of q x k weights; laid out and rendered.
Figure heatmap(const std::string& name, const std::string& caption, std::vector<float> data, int rows,
               int cols, int q, int k, const render::HeatmapOptions& o);

// Token labels of a translation's attention: the first S source positions; the decoder's
// steps (query t is the step that produced token t, or <eos>); the decoder's inputs (key k
// of its self-attention: <bos>, then the outputs).
std::vector<std::string> src_labels(const Model& m, const Translation& r, int S);
std::vector<std::string> out_labels(const Model& m, const Translation& r);
std::vector<std::string> in_labels(const Model& m, const Translation& r);

// Attention rollout (Abnar & Zuidema, 2020) through each layer of `layers` self-attention
// layers of `heads` heads over T tokens, attn(layer, head, query, key): out[l] (T x T) is
// Â_l · ... · Â_0 with Â the rows of (the heads' mean + I) normalised, in float64 as
// Classifier::rollout (attention/rollout.h; layer_rollouts.cpp).
std::vector<std::vector<float>> rollouts(int layers, int heads, int T,
                                         const std::function<float(int, int, int, int)>& attn);

}  // namespace attnlite::figures::detail
