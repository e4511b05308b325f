// The pieces the figure files share (src/viz/figures.cpp: the book's figures;
// src/viz/model_maps.cpp and vit_maps.cpp: the attention maps of trained models).
#pragma once
#include <string>
#include <vector>

#include "attnlite/viz/figures.h"
#include "attnlite/viz/heatmap.h"

namespace attnlite::viz::figures::detail {

// A heatmap figure: `data` holds rows x cols matrices of q x k weights; laid out and rendered.
Figure heatmap(const std::string& name, const std::string& caption, std::vector<float> data, int rows,
               int cols, int q, int k, const viz::HeatmapOptions& o);

}  // namespace attnlite::viz::figures::detail
