// C++ allocations through libstdc++'s operator new: the tracer must unwind
// through operator new (no frame pointers) to the calling function.
//   make_widget: 7 x new Widget (48 bytes); make_array: 3 x new int[100];
//   make_aligned: 2 x new of a 64-aligned type (aligned_alloc via new)
#include <cstdio>
#include <new>

struct Widget {
  long v[6];
};
struct alignas(64) Wide {
  char c[128];
};

static void *volatile sink;

__attribute__((noinline)) Widget *make_widget() {
  Widget *w = new Widget;
  sink = w;
  return w;
}
__attribute__((noinline)) int *make_array() {
  int *a = new int[100];
  sink = a;
  return a;
}
__attribute__((noinline)) Wide *make_aligned() {
  Wide *w = new Wide;
  sink = w;
  return w;
}

int main() {
  Widget *w[7];
  int *a[3];
  Wide *x[2];
  for (auto &p : w) p = make_widget();
  for (auto &p : a) p = make_array();
  for (auto &p : x) p = make_aligned();
  for (auto p : w) delete p;
  for (auto p : a) delete[] p;
  for (auto p : x) delete p;
  std::puts("cxx done");
  return 0;
}
