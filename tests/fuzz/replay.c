/// The main of a fuzz target built without libFuzzer: runs every file it is
/// given, and every file under every directory it is given, through
/// LLVMFuzzerTestOneInput, so that a gcc build (ctest) replays the seed
/// corpus and the regressions (docs/reliability.md).
///
/// usage: fuzz_TARGET [--mutate=N [--mutants-to=DIR]] [--suffix=.EXT] PATH...
/// --suffix=.EXT keeps, from the directories named after it, only the files
/// whose names end in .EXT (the fixtures hold other files too); --suffix=
/// keeps every file again. Files named on the command line always run.
/// Files run in sorted order; a missing path is an error, as is running no
/// file at all. --mutate=N also runs, after each file, N mutants made by
/// the target's mutator (eddy_fuzz_mutate: its own, or byte changes), each
/// from the one before, from seeds that depend only on the file's name and
/// the mutant's number: a fixed, repeatable share of fuzzing for builds
/// without libFuzzer. --mutants-to=DIR writes each mutant to
/// DIR/NAME.mutK before it runs: after a crash, the last one written is
/// the input that crashed.
#define _POSIX_C_SOURCE 200809L

#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct replay {
  const char *suffix; ///< NULL: every file
  long mutants;       ///< per file (--mutate)
  const char *out;    ///< --mutants-to
  size_t num_run, num_mutants;
  bool failed;
} replay_t;

/// The default, for targets without a mutator of their own: one to four
/// byte-level changes, as libFuzzer's own mutations make them (a bit
/// flipped, a byte set to an edge value, a range erased, copied over
/// another place or inserted there, random bytes inserted).
__attribute__((weak)) size_t eddy_fuzz_mutate(uint8_t *data, size_t size,
                                              size_t max_size, uint64_t seed) {
  static const uint8_t edge[] = {0,   1,   0x7f, 0x80, 0xff, '0', '1', '9',
                                 '-', '?', 'x',  '<',  '>',  '"', '{', '\n'};
  uint64_t s = seed;
  for (int k = 0, n = 1 + (int)(eddy_fuzz_rng(&s) % 4); k < n; k++) {
    size_t at = size ? (size_t)(eddy_fuzz_rng(&s) % size) : 0;
    size_t len = 1 + (size_t)(eddy_fuzz_rng(&s) % 16);
    switch (eddy_fuzz_rng(&s) % 6) {
    case 0: // a bit flipped
      if (size)
        data[at] ^= (uint8_t)(1u << (eddy_fuzz_rng(&s) % 8));
      break;
    case 1: // an edge byte
      if (size)
        data[at] = edge[eddy_fuzz_rng(&s) % sizeof edge];
      break;
    case 2: // a range erased
      if (len > size - at)
        len = size - at;
      memmove(data + at, data + at + len, size - at - len);
      size -= len;
      break;
    case 3: { // a range copied over another place
      size_t from = size ? (size_t)(eddy_fuzz_rng(&s) % size) : 0;
      if (len > size - from)
        len = size - from;
      if (len > size - at)
        len = size - at;
      memmove(data + at, data + from, len);
      break;
    }
    default: { // a range of the input (or random bytes) inserted
      if (len > max_size - size)
        len = max_size - size;
      size_t from = size ? (size_t)(eddy_fuzz_rng(&s) % size) : 0;
      bool copy = size && len <= size - from && eddy_fuzz_rng(&s) % 2;
      uint8_t tmp[16];
      for (size_t i = 0; i < len; i++)
        tmp[i] = copy ? data[from + i] : (uint8_t)eddy_fuzz_rng(&s);
      memmove(data + at + len, data + at, size - at);
      memcpy(data + at, tmp, len);
      size += len;
      break;
    }
    }
  }
  return size;
}

/// Runs data in an exact-size copy, as libFuzzer hands it over: reads out
/// of bounds are seen.
static bool run_exact(const uint8_t *data, size_t len) {
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact)
    return false;
  memcpy(exact, data, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return true;
}

/// The --mutate mutants of one file (data holds len bytes, room for cap).
static void run_mutants(replay_t *r, const char *path, uint8_t *data,
                        size_t len, size_t cap) {
  const char *base = strrchr(path, '/');
  uint64_t h = 1469598103934665603ull; // FNV-1a of the file's name
  for (const char *c = base ? base + 1 : path; *c; c++)
    h = (h ^ (uint8_t)*c) * 1099511628211ull;
  for (long k = 0; k < r->mutants; k++) {
    size_t n = eddy_fuzz_mutate(data, len, cap, h + (uint64_t)k);
    if (!n)
      continue; // not mutable that way: the next seed tries again
    len = n;
    if (r->out) {
      char name[4096];
      snprintf(name, sizeof name, "%s/%s.mut%ld", r->out,
               base ? base + 1 : path, k);
      FILE *f = fopen(name, "wb");
      if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "replay: cannot write '%s'\n", name);
        r->failed = true;
      }
      if (f)
        fclose(f);
    }
    if (!run_exact(data, len)) {
      fprintf(stderr, "replay: out of memory for '%s'\n", path);
      r->failed = true;
      return;
    }
    r->num_mutants++;
  }
}

static bool has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), k = strlen(suffix);
  return n >= k && strcmp(name + n - k, suffix) == 0;
}

static void run_file(replay_t *r, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
    r->failed = true;
    return;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *data = malloc(cap);
  for (size_t got; data && (got = fread(data + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      uint8_t *bigger = realloc(data, cap * 2);
      if (!bigger) {
        free(data);
        data = NULL;
        break;
      }
      data = bigger;
      cap *= 2;
    }
  }
  bool read_error = ferror(f);
  fclose(f);
  if (!data || read_error) {
    fprintf(stderr, "replay: cannot read '%s'\n", path);
    free(data);
    r->failed = true;
    return;
  }
  if (!run_exact(data, len)) {
    fprintf(stderr, "replay: out of memory for '%s'\n", path);
    free(data);
    r->failed = true;
    return;
  }
  r->num_run++;
  if (r->mutants > 0) {
    // room to grow: mutants may be larger than the file
    size_t room = len * 2 + 4096;
    uint8_t *big = room > cap ? realloc(data, room) : data;
    if (big)
      run_mutants(r, path, big, len, room > cap ? room : cap);
    data = big ? big : data;
  }
  free(data);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(replay_t *r, const char *path, bool named);

static void run_dir(replay_t *r, const char *path) {
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
    r->failed = true;
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue; // ., .., and hidden files (.gitkeep)
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **more = realloc(names, cap * sizeof *more);
      if (!more)
        break;
      names = more;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    if (!(names[n] = malloc(len)))
      break;
    snprintf(names[n++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (n)
    qsort(names, n, sizeof *names, compare_names);
  for (size_t i = 0; i < n; i++) {
    run_path(r, names[i], false);
    free(names[i]);
  }
  free(names);
}

static void run_path(replay_t *r, const char *path, bool named) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
    r->failed = true;
  } else if (S_ISDIR(sb.st_mode)) {
    run_dir(r, path);
  } else if (named || !r->suffix || has_suffix(path, r->suffix)) {
    run_file(r, path);
  }
}

int main(int argc, char **argv) {
  replay_t r = {0};
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--suffix=", 9) == 0)
      r.suffix = argv[i][9] ? argv[i] + 9 : NULL;
    else if (strncmp(argv[i], "--mutate=", 9) == 0)
      r.mutants = strtol(argv[i] + 9, NULL, 10);
    else if (strncmp(argv[i], "--mutants-to=", 13) == 0)
      r.out = argv[i] + 13;
    else
      run_path(&r, argv[i], true);
  }
  printf("replay: %zu inputs ran", r.num_run);
  if (r.mutants > 0)
    printf(", and %zu mutants of them", r.num_mutants);
  printf("\n");
  if (r.num_run == 0) {
    fprintf(stderr, "replay: no input (usage: %s [--suffix=.EXT] PATH...)\n",
            argv[0]);
    return 1;
  }
  return r.failed ? 1 : 0;
}
