/* SPDX-License-Identifier: MIT */
/* The counter check a reader runs (counter_pick.h): the caller's, the header's, or none. */
#include <errno.h>

#include "control/counter_pick.h"

int nvt_counter_pick(const char *asked, const struct nvt_recording *rec,
		     void (*notice)(const char *msg, void *arg), void *arg,
		     struct nvt_counter_spec *spec, struct nvt_err *err)
{
	if (asked && asked[0]) {
		if (nvt_source_kind_is_pattern(rec->source_kind)) {
			nvt_err_param(err,
				      "the recording holds the test pattern, which is "
				      "checked beat by beat: a counter check is for other data");
			return -EINVAL;
		}
		return nvt_counter_parse(asked, spec, err) ? -EINVAL : 1;
	}
	if (!rec->check[0] || nvt_source_kind_is_pattern(rec->source_kind))
		return 0;
	struct nvt_err perr = {0};
	if (nvt_counter_parse(rec->check, spec, &perr) == 0)
		return 1;
	if (notice)
		notice("the header names a counter check this nvtape does not know (a damaged "
		       "header, or a newer writer): the data's counter is not checked; give one "
		       "with --check",
		       arg);
	return 0;
}
