/* SPDX-License-Identifier: MIT */
/* nvtape: the program's entry; the commands are dispatched in dispatch.c, which the
 * command-line fuzz harness (tests/fuzz/cli.c) drives as well. */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
