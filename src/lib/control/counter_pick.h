/* SPDX-License-Identifier: MIT */
/* Which counter check a reader (verify, play) runs on a recording. */
#ifndef NVT_CONTROL_COUNTER_PICK_H
#define NVT_CONTROL_COUNTER_PICK_H

#include "nvtape/counter.h"
#include "nvtape/format.h"

/* The check asked for (NULL or "": none asked), else the one rec's header names; none for the
 * test pattern, which is checked beat by beat. A header naming a check this nvtape does not
 * know (damaged, or written by a newer one) gets a notice and no check: the rest is read all
 * the same. 1: check *spec; 0: no check; -EINVAL with a parameter error in err: the check
 * asked for cannot be used. */
int nvt_counter_pick(const char *asked, const struct nvt_recording *rec,
		     void (*notice)(const char *msg, void *arg), void *arg,
		     struct nvt_counter_spec *spec, struct nvt_err *err);

#endif
