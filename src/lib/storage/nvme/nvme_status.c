/* SPDX-License-Identifier: MIT */
/* NVMe completion status (status code type + status code) as words, for error messages. */
#include <stdio.h>

#include "storage/nvme/nvme_status.h"

struct code {
	unsigned sct, sc;
	const char *name;
};

static const struct code codes[] = {
	{0, 0x00, "Successful Completion"},
	{0, 0x01, "Invalid Command Opcode"},
	{0, 0x02, "Invalid Field in Command"},
	{0, 0x04, "Data Transfer Error"},
	{0, 0x05, "Commands Aborted due to Power Loss Notification"},
	{0, 0x06, "Internal Error"},
	{0, 0x07, "Command Abort Requested"},
	{0, 0x08, "Command Aborted due to SQ Deletion"},
	{0, 0x0b, "Invalid Namespace or Format"},
	{0, 0x0d, "Invalid SGL Segment Descriptor"},
	{0, 0x80, "LBA Out of Range"},
	{0, 0x81, "Capacity Exceeded"},
	{0, 0x82, "Namespace Not Ready"},
	{1, 0x80, "Conflicting Attributes"},
	{1, 0x81, "Invalid Protection Information"},
	{1, 0x82, "Attempted Write to Read Only Range"},
	{2, 0x80, "Write Fault"},
	{2, 0x81, "Unrecovered Read Error"},
	{2, 0x82, "End-to-end Guard Check Error"},
	{2, 0x85, "Compare Failure"},
	{2, 0x86, "Access Denied"},
	{2, 0x87, "Deallocated or Unwritten Logical Block"},
};

static const char *const types[] = {"Generic", "Command Specific", "Media and Data Integrity",
				    "Path Related"};

const char *nvt_nvme_status_str(unsigned status, char *buf, size_t cap)
{
	unsigned sc = status & 0xff, sct = (status >> 8) & 0x7;
	const char *name = "unknown status";

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].sct == sct && codes[i].sc == sc)
			name = codes[i].name;
	snprintf(buf, cap, "NVMe %s: %s (SCT %u, SC 0x%02x)",
		 sct < 4 ? types[sct] : "Vendor Specific", name, sct, sc);
	return buf;
}
