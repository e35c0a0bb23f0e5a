/* SPDX-License-Identifier: MIT */
/* nvtape meta: read a recording's metadata, or change it (KEY=VALUE, KEY= removes) without
 * touching the data. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/meta.h"

static const char meta_help[] =
	"Usage: nvtape meta [--json] [-q] [--stripe B] FILE... [KEY=VALUE]... [KEY=]...\n"
	"Print the metadata of a recording (what its data is: SigMF's core:sample_rate,\n"
	"core:datatype, core:frequency, ... and any other KEY=VALUE kept with it), or change\n"
	"it: KEY=VALUE sets, KEY= removes. The data is not touched; the index is rewritten so\n"
	"that a crash at any moment leaves a recording that opens (at worst interrupted:\n"
	"nvtape recover finalizes it). A FILE whose name has '=' in it: give it as ./NAME.\n\n"
	"  --json       one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet  nothing on success but the RESULT line\n" CLI_LAYOUT_HELP
	"  -h, --help\n\n" EXIT_CODES_HELP;

static void meta_json(const char *path, const char *meta, int rc, const char *msg)
{
	struct json j;

	cli_json_begin(&j, stdout, rc, msg);
	json_str(&j, "path", path);
	if (meta)
		cli_json_meta(&j, meta);
	json_end(&j);
}

/* An argument that sets or removes a key rather than naming a file: an '=' with no '/' before
 * it (a FILE whose name has an '=' is given as ./NAME). */
static bool is_assignment(const char *a)
{
	const char *eq = strchr(a, '=');
	return eq && !memchr(a, '/', (size_t)(eq - a));
}

/* The key of an assignment is one: 0, or the usage error that says what is wrong with it. */
static int key_error(const char *a)
{
	size_t n = (size_t)(strchr(a, '=') - a), bad = 0;

	if (nvt_meta_key_ok(a, n))
		return 0;
	while (bad < n && nvt_meta_key_ok(a + bad, 1))
		bad++;
	if (!n)
		return cli_usage_error(
			"%s: no KEY before the '=' (a FILE whose name has '=' in it: "
			"give it as ./NAME)",
			a);
	if (bad < n)
		return cli_usage_error("%.*s: a key is 1-64 characters of [A-Za-z0-9_:-], not '%c' "
				       "(a FILE whose name has '=' in it: give it as ./NAME)",
				       (int)(n > 64 ? 64 : n), a, a[bad]);
	return cli_usage_error("%.64s...: a key is 1-64 characters of [A-Za-z0-9_:-]; this one has "
			       "%zu",
			       a, n);
}

/* The metadata after the assignments; NULL (with the usage error printed) for a bad one. */
static char *apply(const char *text, char **set, int nset)
{
	struct nvt_err err = {0};
	char *cur = strdup(text);

	for (int i = 0; cur && i < nset; i++) {
		char key[65], *next;
		const char *eq = strchr(set[i], '=');
		memcpy(key, set[i], (size_t)(eq - set[i]));
		key[eq - set[i]] = 0;
		if (!strcmp(key, "core:datatype") && eq[1] && !nvt_meta_datatype_ok(eq + 1)) {
			cli_usage_error("core:datatype takes a SigMF type (ci16_le, cf32_le, ri8, "
					"cu8, ...), not \"%s\"",
					eq + 1);
			free(cur);
			return NULL;
		}
		next = nvt_meta_set(cur, key, eq + 1);
		free(cur);
		cur = next;
		if (!cur)
			cli_usage_error("%s: a value must be one line of UTF-8 text", set[i]);
	}
	if (cur && nvt_meta_check(cur, &err)) { /* the values SigMF's numbers can take */
		cli_usage_error("%s", err.msg);
		free(cur);
		return NULL;
	}
	return cur;
}

/* The metadata as it is for a pipe; for a terminal, its control characters shown, not run. */
static void print_text(const char *text)
{
	if (!isatty(1)) {
		fputs(text, stdout);
		return;
	}
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);
		if (line)
			cli_put_text(stdout, line);
		free(line);
		putchar('\n');
		p += n + (p[n] == '\n');
	}
}

int cmd_meta(int argc, char **argv)
{
	static const struct option lo[] = {{"json", no_argument, 0, 'j'},
					   {"quiet", no_argument, 0, 'q'},
					   CLI_LAYOUT_OPTIONS,
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	char *files[NVT_MAX_MEMBERS + 1], *set[256], *text = NULL, *now = NULL;
	uint64_t stripe = 0, member_off = 0;
	struct nvt_err err = {0};
	struct nvt_layout L;
	bool json = false, quiet = false;
	int opt, nfiles = 0, nset = 0, rc;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'q')
			quiet = true;
		else if (opt == 'Z' || opt == 'O') {
			if (cli_layout_option(opt, optarg, &stripe, &member_off))
				return NVT_EXIT_USAGE;
		} else if (opt == 'h') {
			fputs(meta_help, stdout);
			return NVT_EXIT_OK;
		} else if (opt == ':')
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		else
			return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
	for (int i = optind; i < argc; i++) {
		if (is_assignment(argv[i])) {
			if (key_error(argv[i]))
				return NVT_EXIT_USAGE;
			if (nset == (int)(sizeof(set) / sizeof(set[0])))
				return cli_usage_error("at most %zu KEY=VALUE at once",
						       sizeof(set) / sizeof(set[0]));
			set[nset++] = argv[i];
		} else if (nset) {
			return cli_usage_error("%s: the FILEs come first, then KEY=VALUE", argv[i]);
		} else if (nfiles <= NVT_MAX_MEMBERS) {
			files[nfiles++] = argv[i];
		}
	}
	if (cli_layout(&L, nfiles, files, 0, stripe, member_off))
		return NVT_EXIT_USAGE;
	if (cli_parse_only)
		return NVT_EXIT_OK;
	rc = nvt_meta_read(&L, NULL, &text, &err);
	if (!rc && nset) {
		now = apply(text, set, nset);
		if (!now) {
			free(text);
			return NVT_EXIT_USAGE;
		}
		rc = nvt_meta_write(&L, NULL, now, &err);
	}
	if (rc) {
		cli_error("%s", cli_err_msg(&err));
		if (json)
			meta_json(files[0], NULL, NVT_EXIT_RUNTIME, cli_err_msg(&err));
		else
			printf("RESULT result=error exit=1\n");
		free(text);
		free(now);
		return NVT_EXIT_RUNTIME;
	}
	if (json) {
		meta_json(files[0], now ? now : text, NVT_EXIT_OK, NULL);
	} else {
		if (!quiet)
			print_text(now ? now : text);
		printf("RESULT result=pass keys_set=%d exit=0\n", nset);
	}
	free(text);
	free(now);
	return NVT_EXIT_OK;
}
