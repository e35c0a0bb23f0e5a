/* SPDX-License-Identifier: MIT */
/* The sink registry: the built-in sinks first, then those a program registers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvtape/sink.h"

#define MAX_SINKS 32

/* The built-in sinks, each in its own file. */
extern const struct nvt_sink_ops nvt_sink_checker, nvt_sink_stdout, nvt_sink_null, nvt_sink_fdrec,
	nvt_sink_udp, nvt_sink_packet;
static const struct nvt_sink_ops *sinks[MAX_SINKS] = {&nvt_sink_checker, &nvt_sink_stdout,
						      &nvt_sink_null,    &nvt_sink_fdrec,
						      &nvt_sink_udp,     &nvt_sink_packet};
static unsigned nsinks = 6;

static size_t name_len(const char *name)
{
	const char *colon = strchr(name, ':');
	return colon ? (size_t)(colon - name) : strlen(name);
}

const struct nvt_sink_ops *nvt_sink_find(const char *name)
{
	size_t n = name ? name_len(name) : 0;

	for (unsigned i = 0; n && i < nsinks; i++)
		if (strlen(sinks[i]->name) == n && !strncmp(sinks[i]->name, name, n))
			return sinks[i];
	return NULL;
}

const struct nvt_sink_ops *nvt_sink_at(unsigned i)
{
	return i < nsinks ? sinks[i] : NULL;
}

int nvt_sink_register(const struct nvt_sink_ops *ops, struct nvt_err *err)
{
	if (!ops || !ops->name || !ops->consume || !*ops->name || strlen(ops->name) > 15 ||
	    strpbrk(ops->name, ": \t")) {
		nvt_err_param(err, "a sink needs a name (1-15 characters, no ':') and a consume() "
				   "function");
		return -EINVAL;
	}
	if (nvt_sink_find(ops->name)) {
		nvt_err_param(err, "a sink named \"%s\" is already registered", ops->name);
		return -EEXIST;
	}
	if (nsinks == MAX_SINKS) {
		nvt_err_set(err, ENOSPC, "the sink registry is full (%d sinks)", MAX_SINKS);
		return -ENOSPC;
	}
	sinks[nsinks++] = ops;
	return 0;
}

const char *nvt_sink_names(void)
{
	static char buf[MAX_SINKS * 18];
	size_t len = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < nsinks && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "",
					sinks[i]->name);
	return buf;
}
