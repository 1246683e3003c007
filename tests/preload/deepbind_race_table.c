/* A library with 20,000 pointers to malloc in RELRO data (R_X86_64_64
 * relocations): the loader takes a while to relocate it, its RELRO still
 * writable meanwhile (deepbind_race.c). */
#include <stdlib.h>

#define M1 malloc,
#define M10 M1 M1 M1 M1 M1 M1 M1 M1 M1 M1
#define M100 M10 M10 M10 M10 M10 M10 M10 M10 M10 M10
#define M1000 M100 M100 M100 M100 M100 M100 M100 M100 M100 M100
#define M10000 M1000 M1000 M1000 M1000 M1000 M1000 M1000 M1000 M1000 M1000

void *(*const race_table[])(size_t) = {M10000 M10000};
