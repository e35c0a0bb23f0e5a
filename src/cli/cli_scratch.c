/* SPDX-License-Identifier: MIT */
/* bench and speedtest write their test pattern to a TARGET; one they created themselves is
 * theirs to remove (a 16 GB file left behind fills a disk), one that was there is not. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_scratch.h"

void cli_scratch_make(struct cli_scratch *s, const char *const *paths, unsigned n)
{
	memset(s, 0, sizeof(*s));
	s->n = n < CLI_SCRATCH_MAX ? n : CLI_SCRATCH_MAX;
	for (unsigned i = 0; i < s->n; i++) {
		struct stat st;
		int fd = open(paths[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

		s->f[i].path = paths[i];
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0) {
			s->f[i].made = true;
			s->f[i].dev = st.st_dev;
			s->f[i].ino = st.st_ino;
		} else {
			unlink(paths[i]); /* cannot be told apart later: not left behind either */
		}
		close(fd);
	}
}

void cli_scratch_finish(struct cli_scratch *s, bool keep, const char *why)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct stat st;
		const char *p = s->f[i].path;

		if (!s->f[i].made)
			continue;
		if (lstat(p, &st) < 0)
			continue; /* the run removed it itself (a filesystem without O_DIRECT) */
		if (!S_ISREG(st.st_mode) || st.st_dev != s->f[i].dev || st.st_ino != s->f[i].ino) {
			fprintf(stderr,
				"nvtape %s: %s is no longer the file this %s created: left alone\n",
				cli_cmd, p, cli_cmd);
			continue;
		}
		if (keep) {
			fprintf(stderr, "nvtape %s: kept %s (%llu bytes, created by this %s): %s\n",
				cli_cmd, p, (unsigned long long)st.st_size, cli_cmd, why);
			continue;
		}
		if (unlink(p) == 0)
			fprintf(stderr,
				"nvtape %s: removed %s (created by this %s; --keep keeps it)\n",
				cli_cmd, p, cli_cmd);
		else
			fprintf(stderr,
				"nvtape %s: could not remove %s (created by this %s): %s; remove "
				"it "
				"with: rm %s\n",
				cli_cmd, p, cli_cmd, strerror(errno), p);
	}
}
