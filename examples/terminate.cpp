// The static device program's terminate handler (examples/CMakeLists.txt links it there only).
//
// std::terminate runs when an exception leaves a program uncaught: never through the C API,
// which turns each one into an al_error, so only a bug gets here. GCC's C++ runtime prints the
// exception's type name with its demangler, and a static program carries that demangler
// (about 47 KB on aarch64) for this message alone. Defining the handler the runtime calls
// keeps the runtime's own out of the link: the same message and what(), without the type's
// name, then abort() as before.
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace __gnu_cxx {

void __verbose_terminate_handler() {
  static bool entered = false;  // a second terminate while printing: abort at once
  if (!entered) {
    entered = true;
    if (std::exception_ptr e = std::current_exception()) {
      std::fputs("terminate called after throwing an exception\n", stderr);
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        std::fprintf(stderr, "  what():  %s\n", x.what());
      } catch (...) {
      }
    } else {
      std::fputs("terminate called without an active exception\n", stderr);
    }
  }
  std::abort();
}

}  // namespace __gnu_cxx
