// Uses only the installed headers and library.
#include <attnlite/model.h>
#include <attnlite/translate.h>
#include <attnlite/viz/figures.h>  // the viz/ headers install with the rest

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    if (attnlite::viz::colormap_from_name("reds") != attnlite::viz::Colormap::Reds) return 3;
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
