/* SPDX-License-Identifier: MIT */
/* The plain (gcc, no libFuzzer) driver of a fuzz harness: runs it once over every file given,
 * or every file in each directory given, so that the seed corpus and every input that ever
 * crashed run as an ordinary test. Fails when an input breaks an invariant (abort) or when no
 * input was found; a directory that does not exist holds no inputs. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned ran;

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		exit(1);
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf) {
				fprintf(stderr, "%s: out of memory\n", path);
				exit(1);
			}
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	fprintf(stderr, "input %s (%zu bytes)\n", path, len);
	/* the input in a buffer of exactly its size, as libFuzzer gives it (ASan sees overreads) */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		exit(1);
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	ran++;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void run_dir(const char *path)
{
	struct dirent **e;
	int n = scandir(path, &e, NULL, by_name);

	if (n < 0 && errno == ENOENT)
		return; /* no regressions kept for this harness (yet) */
	if (n < 0) {
		perror(path);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", path, e[i]->d_name);
		if (e[i]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			run_file(p);
		free(e[i]);
	}
	free(e);
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && !S_ISDIR(st.st_mode))
			run_file(argv[i]);
		else
			run_dir(argv[i]);
	}
	fprintf(stderr, "%s: %u inputs, every invariant held\n", argv[0], ran);
	return ran ? 0 : 1;
}
