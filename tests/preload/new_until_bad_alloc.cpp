// preload.pool_exhausted: news BYTES-byte arrays, kept, until operator new
// throws std::bad_alloc, which nothing catches: the program dies in
// std::terminate (SIGABRT) after libstdc++'s message.
#include <cstdlib>
#include <cstring>

static char *blocks[1000000];

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  size_t bytes = std::strtoul(argv[1], nullptr, 0);
  for (size_t n = 0; n < sizeof blocks / sizeof *blocks; n++) {
    blocks[n] = new char[bytes];
    std::memset(blocks[n], 1, bytes);
  }
  return 0;
}
