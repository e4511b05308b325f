// A model file on a big-endian machine: the loader refuses it with a message, before reading
// a weight. tools/test.sh's arm stage builds this with src/file/safetensors.cpp for s390x (Debian's
// g++-s390x-linux-gnu) and runs it under qemu-s390x; built for a little-endian machine it
// checks the opposite (the same file loads).
//   endian_check MODEL.safetensors
#include <cstdio>
#include <string>

#include "attnlite/error.h"
#include "attnlite/safetensors.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const bool big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
  try {
    auto st = attnlite::SafeTensors::load(argv[1]);
    std::printf("loaded %zu tensors\n", st.tensors().size());
    if (big) {
      std::printf("FAIL: a big-endian machine loaded a little-endian model\n");
      return 1;
    }
  } catch (const attnlite::Error& e) {
    std::printf("%s\n", e.what());
    const bool named = std::string(e.what()).find("big-endian") != std::string::npos;
    if (!big || !named) {
      std::printf("FAIL: expected %s\n", big ? "the big-endian message" : "the model to load");
      return 1;
    }
  }
  std::printf("ok: %s machine\n", big ? "big-endian" : "little-endian");
  return 0;
}
