// Uses only the installed headers and library.
#include <attnlite/model.h>
#include <attnlite/translate.h>
#include <attnlite/figures/figures.h>  // the render/ and figures/ headers install with the rest

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    if (attnlite::render::colormap_from_name("reds") != attnlite::render::Colormap::Reds) return 3;
    auto model = attnlite::Model::load(argv[1]);
    attnlite::Translator tr(model);
    const auto& r = tr.translate(argv[2]);
    std::printf("%.*s\n", (int)r.text.size(), r.text.data());
    return 0;
  } catch (const attnlite::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
