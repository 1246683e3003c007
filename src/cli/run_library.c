/* Which tracer library `heaphook run` preloads, and under what path
 * (run_library.h). */
#define _GNU_SOURCE
#include "run_library.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* header only, as in src/trace/format.h */
#include <xxhash.h>

/* path is an ELF shared object (what LD_PRELOAD loads). */
static bool shared_object(const char *path) {
  unsigned char h[18];
  FILE *f = fopen(path, "rbe");
  if (!f) return false;
  bool ok = fread(h, 1, sizeof h, f) == sizeof h && memcmp(h, "\177ELF", 4) == 0 && h[16] == 3 && h[17] == 0;
  fclose(f); /* (e_type ET_DYN, little-endian) */
  return ok;
}

bool hh_run_preloaded_heaphook(char *out, size_t size) {
  const char *pre = getenv("LD_PRELOAD");
  if (!pre || !*pre) return false;
  /* Every heaphook library exports hh_allocator_of beside its malloc
   * family; this program defines neither. */
  void *m = dlsym(RTLD_DEFAULT, "malloc"), *of = dlsym(RTLD_DEFAULT, "hh_allocator_of");
  Dl_info at_m, at_of;
  if (!m || !of || !dladdr(m, &at_m) || !dladdr(of, &at_of) || at_m.dli_fbase != at_of.dli_fbase ||
      !at_m.dli_fname || !*at_m.dli_fname)
    return false;
  snprintf(out, size, "%s", at_m.dli_fname);
  return true;
}

int hh_run_find_library(char *out, size_t size, char *why, size_t why_size) {
  const char *env = getenv("HEAPHOOK_LIBRARY");
  char real[PATH_MAX];
  if (env && *env) {
    if (!realpath(env, real) || access(real, R_OK) != 0) {
      snprintf(why, why_size, "HEAPHOOK_LIBRARY=%s: %s", env, strerror(errno));
      return -1;
    }
    if (!shared_object(real)) {
      snprintf(why, why_size, "HEAPHOOK_LIBRARY=%s is not a shared library", env);
      return -1;
    }
  } else {
    char self[PATH_MAX], lib[PATH_MAX + 32];
    if (!realpath("/proc/self/exe", self)) {
      snprintf(why, why_size, "cannot find this program's path: %s", strerror(errno));
      return -1;
    }
    /* build/src/cli/heaphook has it in build/src/; installed, bin/heaphook
     * has it in lib/ */
    const char *dir = dirname(self);
    snprintf(lib, sizeof lib, "%s/../libheaphook.so", dir);
    if (!realpath(lib, real) || access(real, R_OK) != 0)
      snprintf(lib, sizeof lib, "%s/../lib/libheaphook.so", dir);
    if (!realpath(lib, real) || access(real, R_OK) != 0) {
      snprintf(
          why, why_size,
          "cannot find the tracer library libheaphook.so next to this program (%s); set HEAPHOOK_LIBRARY",
          lib);
      return -1;
    }
  }
  snprintf(out, size, "%s", real);
  return 0;
}

/* The characters glibc's loader splits LD_PRELOAD at (and only these). */
static bool splits(const char *path) { return strpbrk(path, " :") != NULL; }

/* dir exists as a directory of ours that nobody else may write in (else a
 * link there could be swapped for another library), or is made so. */
static int private_dir(const char *dir, char *why, size_t why_size) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    snprintf(why, why_size, "cannot make %s: %s", dir, strerror(errno));
    return -1;
  }
  struct stat st;
  if (lstat(dir, &st) != 0) {
    snprintf(why, why_size, "cannot use %s: %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    snprintf(why, why_size, "%s is not a directory of yours that only you may write in", dir);
    return -1;
  }
  return 0;
}

int hh_run_preload_path(const char *lib, char *out, size_t size, char *why, size_t why_size) {
  if (!splits(lib)) {
    snprintf(out, size, "%s", lib);
    return 0;
  }
  char dir[PATH_MAX];
  const char *run = getenv("XDG_RUNTIME_DIR");
  if (run && run[0] == '/' && !splits(run) && strlen(run) < PATH_MAX - 16)
    snprintf(dir, sizeof dir, "%s/heaphook", run);
  else
    snprintf(dir, sizeof dir, "/tmp/heaphook-%u", (unsigned)geteuid());
  if (private_dir(dir, why, why_size) != 0) return -1;

  /* One name per library path: the next runs find the link made. */
  char link[PATH_MAX + 64];
  snprintf(link, sizeof link, "%s/libheaphook-%016" PRIx64 ".so", dir,
           (uint64_t)XXH3_64bits(lib, strlen(lib)));
  char target[PATH_MAX];
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0 || (size_t)n != strlen(lib) || memcmp(target, lib, (size_t)n) != 0) {
    /* Made aside and renamed over: runs that start at once all see a whole link. */
    char tmp[sizeof link + 32];
    snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
    unlink(tmp);
    if (symlink(lib, tmp) != 0 || rename(tmp, link) != 0) {
      snprintf(why, why_size, "cannot make a link to it in %s: %s", dir, strerror(errno));
      unlink(tmp);
      return -1;
    }
  }
  if (strlen(link) >= size) {
    snprintf(why, why_size, "the link %s is too long", link);
    return -1;
  }
  snprintf(out, size, "%s", link);
  return 0;
}
