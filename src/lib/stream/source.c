/* SPDX-License-Identifier: MIT */
/* The source registry: the built-in sources first, then those a program registers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvtape/source.h"

#define MAX_SOURCES 32

/* The built-in sources, each in its own file. */
extern const struct nvt_source_ops nvt_source_tpg, nvt_source_stdin, nvt_source_dev,
	nvt_source_fdrec, nvt_source_shm, nvt_source_udp, nvt_source_pcap, nvt_source_packet;
static const struct nvt_source_ops *sources[MAX_SOURCES] = {
	&nvt_source_tpg, &nvt_source_stdin, &nvt_source_dev,  &nvt_source_fdrec,
	&nvt_source_shm, &nvt_source_udp,   &nvt_source_pcap, &nvt_source_packet};
static unsigned nsources = 8;

static size_t name_len(const char *name)
{
	const char *colon = strchr(name, ':');
	return colon ? (size_t)(colon - name) : strlen(name);
}

const struct nvt_source_ops *nvt_source_find(const char *name)
{
	size_t n = name ? name_len(name) : 0;

	for (unsigned i = 0; n && i < nsources; i++)
		if (strlen(sources[i]->name) == n && !strncmp(sources[i]->name, name, n))
			return sources[i];
	return NULL;
}

const struct nvt_source_ops *nvt_source_at(unsigned i)
{
	return i < nsources ? sources[i] : NULL;
}

int nvt_source_register(const struct nvt_source_ops *ops, struct nvt_err *err)
{
	if (!ops || !ops->name || !ops->run || !ops->unit_bytes || 4096 % ops->unit_bytes ||
	    !*ops->name || strlen(ops->name) > 15 || strpbrk(ops->name, ": \t")) {
		nvt_err_param(err, "a source needs a name (1-15 characters, no ':'), a run() "
				   "function and a unit that divides 4096 bytes");
		return -EINVAL;
	}
	if (nvt_source_find(ops->name)) {
		nvt_err_param(err, "a source named \"%s\" is already registered", ops->name);
		return -EEXIST;
	}
	if (nsources == MAX_SOURCES) {
		nvt_err_set(err, ENOSPC, "the source registry is full (%d sources)", MAX_SOURCES);
		return -ENOSPC;
	}
	sources[nsources++] = ops;
	return 0;
}

const char *nvt_source_names(void)
{
	static char buf[MAX_SOURCES * 18];
	size_t len = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < nsources && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "",
					sources[i]->name);
	return buf;
}
