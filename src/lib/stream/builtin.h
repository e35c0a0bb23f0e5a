/* SPDX-License-Identifier: MIT */
/* The built-in sources and sinks, each in its own file and listed in its registry. */
#ifndef NVT_STREAM_BUILTIN_H
#define NVT_STREAM_BUILTIN_H

#include "nvtape/sink.h"
#include "nvtape/source.h"

extern const struct nvt_source_ops nvt_source_tpg;
extern const struct nvt_source_ops nvt_source_stdin;

extern const struct nvt_sink_ops nvt_sink_checker;
extern const struct nvt_sink_ops nvt_sink_stdout;
extern const struct nvt_sink_ops nvt_sink_null;

#endif
