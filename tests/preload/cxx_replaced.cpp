// preload.cxx_replaced_*: a program that replaces the plain operator new
// and delete (C++ lets it; here with a header of its own in front of each
// block) keeps them for every form under heaphook: new[] and the sized
// deletes reach them as libstdc++'s do (found by review: heaphook's
// operators went straight to libstdc++'s plain forms, past the program's,
// and free() got the program's blocks: "free(): invalid pointer").
// Prints "new 3 delete 3" and exits 0 when every form reached them.
#include <cstdio>
#include <cstdlib>
#include <new>

static long news, deletes;

void *operator new(std::size_t n) {
  news++;
  char *p = static_cast<char *>(std::malloc(n + 16));
  if (p == nullptr) throw std::bad_alloc();
  *reinterpret_cast<std::size_t *>(p) = 0xfeedf00d;
  return p + 16;
}

void operator delete(void *p) noexcept {
  if (p == nullptr) return;
  deletes++;
  char *b = static_cast<char *>(p) - 16;
  if (*reinterpret_cast<std::size_t *>(b) != 0xfeedf00d) {
    std::fprintf(stderr, "operator delete: not a block of this program's operator new\n");
    std::abort();
  }
  std::free(b);
}

struct S {
  long x[4];
  virtual ~S() {}
};

static void *volatile sink;

int main() {
  S *first = new S;  // operator new
  sink = first;
  delete first;  // sized: operator delete(void *, size_t)
  S *s = new S;
  sink = s;
  delete s;
  int *a = new int[10];  // operator new[]
  sink = a;
  delete[] a;  // operator delete[]
  std::printf("new %ld delete %ld\n", news, deletes);
  return news == 3 && deletes == 3 ? 0 : 1;
}
