/* SPDX-License-Identifier: MIT */
/* nvtape setup: prepare (or tear down) a recording volume. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/setup.h"

static const char setup_help[] =
	"Usage: nvtape setup --raid0 DEV DEV... [options]\n"
	"   or: nvtape setup --single DEV [options]\n"
	"   or: nvtape setup --teardown [--mount DIR] [--md MD]\n"
	"Prepare a recording volume: an md RAID0 array (metadata 1.2, so any Linux PC assembles\n"
	"it with mdadm) or one drive, a filesystem aligned to the stripe, mounted noatime.\n"
	"Lists what will be destroyed and asks first; refuses devices that are mounted or in "
	"use.\n\n"
	"  --chunk B       RAID0 chunk (default 512K)\n"
	"  --fs xfs|ext4|exfat   filesystem (default xfs)\n"
	"  --mount DIR     mount point (default /mnt/rec)\n"
	"  --md MD         md device (default /dev/md0)\n"
	"  -y, --yes       do not ask\n"
	"  --json          one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet     do not list the commands as they run\n"
	"  -h, --help\n\n" EXIT_CODES_HELP;

static bool confirm(const char *plan, void *arg)
{
	char answer[16] = "";

	(void)arg;
	fputs(plan, stderr);
	if (!isatty(0)) {
		fprintf(stderr, "nvtape setup: standard input is not a terminal: give --yes to "
				"proceed without asking\n");
		return false;
	}
	fprintf(stderr, "Type yes to continue: ");
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	return strcmp(answer, "yes\n") == 0;
}

static void log_cmd(const char *line, void *arg)
{
	if (*(const bool *)arg)
		return;
	fprintf(stderr, "nvtape setup: %s\n", line);
}

static void setup_json(const struct nvt_setup_opts *o, int rc, const char *msg, FILE *f)
{
	static const char *const modes[] = {"raid0", "single", "teardown"};
	struct json j;

	cli_json_begin(&j, f, rc, msg);
	json_str(&j, "mode", modes[o->mode]);
	json_arr(&j, "devices");
	for (unsigned i = 0; i < o->ndevs; i++)
		json_str(&j, NULL, o->devs[i]);
	json_arr_end(&j);
	json_str(&j, "fs", o->mode == NVT_SETUP_TEARDOWN ? NULL : o->fs);
	json_uint(&j, "chunk", o->chunk);
	json_str(&j, "mount", o->mount);
	json_str(&j, "md",
		 o->mode == NVT_SETUP_RAID0 || o->mode == NVT_SETUP_TEARDOWN ? o->md : NULL);
	json_end(&j);
}

static const struct option setup_lo[] = {
	{"raid0", no_argument, 0, 'R'},    {"single", no_argument, 0, 'S'},
	{"teardown", no_argument, 0, 'T'}, {"chunk", required_argument, 0, 'c'},
	{"fs", required_argument, 0, 'f'}, {"mount", required_argument, 0, 'm'},
	{"md", required_argument, 0, 'M'}, {"yes", no_argument, 0, 'y'},
	{"json", no_argument, 0, 'j'},     {"quiet", no_argument, 0, 'q'},
	{"help", no_argument, 0, 'h'},     {0, 0, 0, 0}};

struct setup_cli {
	bool json, quiet;
	int modes; /* how many of --raid0, --single, --teardown were given */
};

/* One option: 0, NVT_EXIT_USAGE, or -1 when --help was shown. */
static int setup_option(int opt, char **argv, struct setup_cli *c, struct nvt_setup_opts *o)
{
	switch (opt) {
	case 'R':
		o->mode = NVT_SETUP_RAID0;
		c->modes++;
		return 0;
	case 'S':
		o->mode = NVT_SETUP_SINGLE;
		c->modes++;
		return 0;
	case 'T':
		o->mode = NVT_SETUP_TEARDOWN;
		c->modes++;
		return 0;
	case 'c':
		return cli_size("--chunk", optarg, &o->chunk) ? NVT_EXIT_USAGE : 0;
	case 'f':
		o->fs = optarg;
		return 0;
	case 'm':
		o->mount = optarg;
		return 0;
	case 'M':
		o->md = optarg;
		return 0;
	case 'y':
		o->yes = true;
		return 0;
	case 'j':
		c->json = true;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	case 'h':
		fputs(setup_help, stdout);
		return -1;
	case ':':
		return cli_usage_error("%s needs a value", argv[optind - 1]);
	default:
		return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
}

/* One mode, and the devices it takes. */
static int check_args(int argc, char **argv, struct nvt_setup_opts *o, const struct setup_cli *c)
{
	if (c->modes != 1)
		return cli_usage_error("give one of --raid0, --single, --teardown");
	if (argc - optind > NVT_MAX_MEMBERS)
		return cli_usage_error("at most %d devices", NVT_MAX_MEMBERS);
	if (o->mode == NVT_SETUP_TEARDOWN && argc > optind)
		return cli_usage_error("--teardown takes no devices");
	for (int i = optind; i < argc; i++)
		o->devs[o->ndevs++] = argv[i];
	return 0;
}

static int run_setup(struct nvt_setup_opts *o, struct setup_cli *c)
{
	struct nvt_err err = {0};
	int rc;

	o->confirm = confirm;
	o->log = log_cmd;
	o->arg = &c->quiet;
	rc = cli_exit_of(nvt_setup(o, &err), &err, false);
	if (rc == NVT_EXIT_USAGE)
		cli_usage_error("%s", cli_err_msg(&err));
	else if (rc)
		cli_error("%s", cli_err_msg(&err));
	if (c->json)
		setup_json(o, rc, err.msg, stdout);
	if (rc)
		return rc;
	if (o->mode != NVT_SETUP_TEARDOWN)
		fprintf(stderr, "nvtape setup: ready: nvtape record ... %s/rec.nvt\n", o->mount);
	return NVT_EXIT_OK;
}

int cmd_setup(int argc, char **argv)
{
	struct nvt_setup_opts o;
	struct setup_cli c = {0};
	int opt, rc;

	nvt_setup_opts_default(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":yqh", setup_lo, NULL)) != -1)
		if ((rc = setup_option(opt, argv, &c, &o)))
			return rc < 0 ? NVT_EXIT_OK : rc;
	rc = check_args(argc, argv, &o, &c);
	if (rc || cli_parse_only)
		return rc;
	return run_setup(&o, &c);
}
