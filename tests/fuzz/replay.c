/// The main of a fuzz target built without libFuzzer: runs every file it is
/// given, and every file under every directory it is given, through
/// LLVMFuzzerTestOneInput, so that a gcc build (ctest) replays the seed
/// corpus and the regressions (docs/reliability.md).
///
/// usage: fuzz_TARGET [--suffix=.EXT] PATH... [--suffix=] PATH...
/// --suffix=.EXT keeps, from the directories named after it, only the files
/// whose names end in .EXT (the fixtures hold other files too); --suffix=
/// keeps every file again. Files named on the command line always run.
/// Files run in sorted order; a missing path is an error, as is running no
/// file at all.
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
  size_t num_run;
  bool failed;
} replay_t;

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
  // libFuzzer hands over an exact-size copy: out-of-bounds reads are seen.
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    fprintf(stderr, "replay: out of memory for '%s'\n", path);
    free(data);
    r->failed = true;
    return;
  }
  memcpy(exact, data, len);
  free(data);
  LLVMFuzzerTestOneInput(exact, len);
  r->num_run++;
  free(exact);
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
    else
      run_path(&r, argv[i], true);
  }
  printf("replay: %zu inputs ran\n", r.num_run);
  if (r.num_run == 0) {
    fprintf(stderr, "replay: no input (usage: %s [--suffix=.EXT] PATH...)\n",
            argv[0]);
    return 1;
  }
  return r.failed ? 1 : 0;
}
