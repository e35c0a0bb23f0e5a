/* SPDX-License-Identifier: MIT */
/* The target files a qualifying command (bench, speedtest) creates for itself: made before the
 * first run, and removed after the last unless --keep, only while the path still names the
 * file the command made; a target that existed before is never removed. */
#ifndef NVT_CLI_SCRATCH_H
#define NVT_CLI_SCRATCH_H

#include <stdbool.h>
#include <sys/types.h>

#define CLI_SCRATCH_MAX 16

struct cli_scratch {
	unsigned n;
	struct {
		const char *path;
		bool made; /* this command created it (dev, ino) */
		dev_t dev;
		ino_t ino;
	} f[CLI_SCRATCH_MAX];
};

/* Create each of the n paths that does not exist yet (empty, 0644, never through a symbolic
 * link) and remember it; a path that exists, or that cannot be created here, is left to the
 * run (which reports its own error). */
void cli_scratch_make(struct cli_scratch *s, const char *const *paths, unsigned n);
/* After the runs: remove every file made here unless keep, and say on stderr what became of
 * each (why: what keeps them, for the message). */
void cli_scratch_finish(struct cli_scratch *s, bool keep, const char *why);

#endif
