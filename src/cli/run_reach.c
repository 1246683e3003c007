/* Whether LD_PRELOAD reaches a program (run_reach.h). */
#define _GNU_SOURCE
#include "run_reach.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* prog's path as execvp finds it: as given when it has a slash, else the
 * first executable regular file of that name along $PATH. */
static bool locate(const char *prog, char *out, size_t size) {
  if (strchr(prog, '/')) {
    snprintf(out, size, "%s", prog);
    return true;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin"; /* execvp's default */
  for (const char *p = path;; p++) {
    const char *end = strchrnul(p, ':');
    int len = (int)(end - p);
    /* an empty entry is the working directory */
    snprintf(out, size, "%.*s%s%s", len, p, len ? "/" : "", prog);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return true;
    if (*end == '\0') return false;
    p = end;
  }
}

/* The loader runs an executable in secure mode, where it ignores
 * LD_PRELOAD paths, when the exec changes the process's user or group or
 * gives it capabilities (on a file system that honours them). */
static const char *secure_mode(const char *path, const struct stat *st) {
  struct statvfs vfs;
  if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)) return NULL;
  if ((st->st_mode & S_ISUID) && st->st_uid != getuid()) return "is set-user-ID";
  if ((st->st_mode & S_ISGID) && st->st_gid != getgid()) return "is set-group-ID";
  if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) >= 0) return "has file capabilities";
  return NULL;
}

/* An ELF executable with no program interpreter (PT_INTERP) is statically
 * linked (static-pie included); the loader itself, run as a program, has
 * none either but carries a DT_SONAME. */
static bool statically_linked(int fd) {
  elf_version(EV_CURRENT);
  Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
  if (!elf) return false;
  bool interp = false, soname = false, is_static = false;
  GElf_Ehdr eh;
  size_t n;
  if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
      elf_getphdrnum(elf, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP) interp = true;
    }
    for (Elf_Scn *scn = NULL; !interp && (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      Elf_Data *d;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL))) continue;
      for (size_t j = 0; sh.sh_entsize && j < sh.sh_size / sh.sh_entsize; j++) {
        GElf_Dyn dyn;
        if (gelf_getdyn(d, (int)j, &dyn) && dyn.d_tag == DT_SONAME) soname = true;
      }
    }
    is_static = !interp && !soname;
  }
  elf_end(elf);
  return is_static;
}

static bool unreachable(const char *prog, char *why, size_t why_size, int depth) {
  char path[PATH_MAX];
  if (depth > 4 || !locate(prog, path, sizeof path)) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    return false;
  }
  const char *secure = secure_mode(path, &st);
  char head[PATH_MAX + 2];
  ssize_t got = pread(fd, head, sizeof head - 1, 0);
  bool is_static = !secure && got >= 4 && memcmp(head, ELFMAG, SELFMAG) == 0 && statically_linked(fd);
  close(fd);
  if (secure || is_static) {
    snprintf(why, why_size, "%s %s", path, secure ? secure : "is statically linked");
    return true;
  }
  /* A script: what matters is its interpreter (#!/path [arg]). */
  if (got < 3 || head[0] != '#' || head[1] != '!') return false;
  head[got] = '\0';
  char *interp = head + 2 + strspn(head + 2, " \t");
  interp[strcspn(interp, " \t\n")] = '\0';
  if (!*interp) return false;
  /* the kernel takes a name without a slash as relative, not along $PATH */
  char rel[PATH_MAX + 2];
  snprintf(rel, sizeof rel, "%s%s", strchr(interp, '/') ? "" : "./", interp);
  return unreachable(rel, why, why_size, depth + 1);
}

bool hh_run_unreachable(const char *prog, char *why, size_t why_size) {
  return unreachable(prog, why, why_size, 0);
}

/* The ELF file on fd defines hh_untraced_process in its dynamic symbols:
 * a heaphook command (src/cli/main.c), this build's or another's. */
static bool exports_untraced(int fd) {
  elf_version(EV_CURRENT);
  Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
  if (!elf) return false;
  bool found = false;
  for (Elf_Scn *scn = NULL; elf_kind(elf) == ELF_K_ELF && !found && (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    Elf_Data *d;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
        !(d = elf_getdata(scn, NULL)))
      continue;
    for (size_t j = 0; !found && j < sh.sh_size / sh.sh_entsize; j++) {
      GElf_Sym sym;
      const char *name;
      if (gelf_getsym(d, (int)j, &sym) && sym.st_shndx != SHN_UNDEF &&
          (name = elf_strptr(elf, sh.sh_link, sym.st_name)) && strcmp(name, "hh_untraced_process") == 0)
        found = true;
    }
  }
  elf_end(elf);
  return found;
}

bool hh_run_heaphook_command(const char *prog, char *path, size_t size) {
  if (!locate(prog, path, size)) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char head[SELFMAG];
  bool elf = pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && memcmp(head, ELFMAG, SELFMAG) == 0;
  bool is = elf && exports_untraced(fd);
  close(fd);
  return is;
}
