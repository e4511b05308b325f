// examples/terminate.cpp, the static device program's terminate handler, does what GCC's
// runtime did: an uncaught exception prints its what() and the program aborts. tools/test.sh's
// arm stage links this with it, statically for aarch64, runs it under qemu-aarch64 and checks
// the message and the abort (SIGABRT); the program must not link GCC's handler (a second
// definition would fail the link) and so not its demangler.
#include <stdexcept>

int main(int argc, char**) {
  if (argc > 1) throw std::runtime_error("a test exception");
  throw 7;  // not a std::exception: the message without what()
}
