// A C++ churn for bench/cxx_bench.sh: new[] and delete[] of random sizes
// (16-527 bytes) over 8192 slots, one byte written per block, as
// hh_bench_overhead does with malloc and free. Prints the loop's wall time
// in ms (start-up left out).
//   hh_bench_cxx [STEPS]   (default 10000000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  long steps = argc > 1 ? std::atol(argv[1]) : 10000000;
  std::vector<char *> slots(8192, nullptr);
  unsigned x = 12345;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < steps; i++) {
    x = x * 1103515245u + 12345u;
    unsigned k = (x >> 8) & 8191;
    delete[] slots[k];
    std::size_t size = 16 + ((x >> 21) & 511);
    slots[k] = new char[size];
    slots[k][0] = (char)i;
  }
  auto t1 = std::chrono::steady_clock::now();
  for (char *p : slots) delete[] p;
  std::printf("%.1f\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
}
