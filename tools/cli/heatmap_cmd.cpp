// attnlite heatmap — the chapter's figures (filled in with the renderer).
#include <cstdio>

#include "common.h"

namespace attnlite::cli {

int cmd_heatmap(int argc, char** argv) {
  std::fprintf(stderr, "attnlite heatmap: not built yet\n");
  return kFailed;
}

}  // namespace attnlite::cli
