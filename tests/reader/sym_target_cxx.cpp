// A C++ member function for the symbolizer tests: its name must come out
// demangled, with its parameter types.
#include "sym_target.h"

int sym_cxx_line;

namespace hhtest {
struct Widget {
  void *make(int n);
};

__attribute__((noinline)) void *Widget::make(int n) {
  // The capture and __LINE__ must stay on one line.
  // clang-format off
  void *volatile p = hh_test_capture(); sym_cxx_line = __LINE__ + 0 * n;
  // clang-format on
  return p;
}
}  // namespace hhtest

extern "C" void *sym_cxx_caller(void) {
  hhtest::Widget w;
  return w.make(3);
}
