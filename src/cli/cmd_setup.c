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

int cmd_setup(int argc, char **argv)
{
	static const struct option lo[] = {
		{"raid0", no_argument, 0, 'R'},    {"single", no_argument, 0, 'S'},
		{"teardown", no_argument, 0, 'T'}, {"chunk", required_argument, 0, 'c'},
		{"fs", required_argument, 0, 'f'}, {"mount", required_argument, 0, 'm'},
		{"md", required_argument, 0, 'M'}, {"yes", no_argument, 0, 'y'},
		{"json", no_argument, 0, 'j'},     {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},     {0, 0, 0, 0}};
	struct nvt_setup_opts o;
	struct nvt_err err = {0};
	bool json = false, quiet = false;
	int opt, modes = 0, rc;

	nvt_setup_opts_default(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":yqh", lo, NULL)) != -1) {
		switch (opt) {
		case 'R':
			o.mode = NVT_SETUP_RAID0;
			modes++;
			break;
		case 'S':
			o.mode = NVT_SETUP_SINGLE;
			modes++;
			break;
		case 'T':
			o.mode = NVT_SETUP_TEARDOWN;
			modes++;
			break;
		case 'c':
			if (cli_size("--chunk", optarg, &o.chunk))
				return NVT_EXIT_USAGE;
			break;
		case 'f':
			o.fs = optarg;
			break;
		case 'm':
			o.mount = optarg;
			break;
		case 'M':
			o.md = optarg;
			break;
		case 'y':
			o.yes = true;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(setup_help, stdout);
			return NVT_EXIT_OK;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (modes != 1)
		return cli_usage_error("give one of --raid0, --single, --teardown");
	if (argc - optind > NVT_MAX_MEMBERS)
		return cli_usage_error("at most %d devices", NVT_MAX_MEMBERS);
	if (o.mode == NVT_SETUP_TEARDOWN && argc > optind)
		return cli_usage_error("--teardown takes no devices");
	for (int i = optind; i < argc; i++)
		o.devs[o.ndevs++] = argv[i];
	o.confirm = confirm;
	o.log = log_cmd;
	o.arg = &quiet;
	rc = cli_exit_of(nvt_setup(&o, &err), &err, false);
	if (rc == NVT_EXIT_USAGE)
		cli_usage_error("%s", cli_err_msg(&err));
	else if (rc)
		cli_error("%s", cli_err_msg(&err));
	if (json)
		setup_json(&o, rc, err.msg, stdout);
	if (rc)
		return rc;
	if (o.mode != NVT_SETUP_TEARDOWN)
		fprintf(stderr, "nvtape setup: ready: nvtape record ... %s/rec.nvt\n", o.mount);
	return NVT_EXIT_OK;
}
