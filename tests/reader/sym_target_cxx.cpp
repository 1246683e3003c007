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

int sym_lambda_line;

namespace hhtest {
// A function template instantiated on a lambda's type: GCC gives its DWARF
// no linkage name, only "run_it<sym_cxx_lambda_caller()::<lambda()> >".
template <typename F>
__attribute__((noinline)) void *run_it(F f) {
  // clang-format off
  void *volatile p = hh_test_capture(); sym_lambda_line = __LINE__;
  // clang-format on
  f();
  return p;
}
}  // namespace hhtest

extern "C" void *sym_cxx_lambda_caller(void) {
  return hhtest::run_it([] { sym_cxx_line += 0; });
}

extern "C" void *sym_cxx_caller(void) {
  hhtest::Widget w;
  return w.make(3);
}
