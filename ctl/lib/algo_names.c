// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "xfib/maps.h"
#include "algo_names.h"

static const struct {
	const char *name;
	int fam;
} algos[XFIB_ALGO_COUNT] = {
	[XFIB_ALGO_BSEARCH4] = { "bsearch4", XFIB_V4 },
	[XFIB_ALGO_BSEARCH6] = { "bsearch6", XFIB_V6 },
	[XFIB_ALGO_DIR24_8] = { "dir24_8", XFIB_V4 },
	[XFIB_ALGO_TRIE6] = { "trie6", XFIB_V6 },
	[XFIB_ALGO_DXR] = { "dxr", XFIB_V4 },
	[XFIB_ALGO_POPTRIE6] = { "poptrie6", XFIB_V6 },
};

const char *xfib_algo_name(unsigned int id)
{
	if (id == XFIB_ALGO_NONE)
		return "none";
	return id < XFIB_ALGO_COUNT && algos[id].name ? algos[id].name : "unknown";
}

int xfib_algo_family(unsigned int id)
{
	return id < XFIB_ALGO_COUNT && algos[id].name ? algos[id].fam : -1;
}

int xfib_algo_by_name(const char *name)
{
	unsigned int id;

	for (id = 0; id < XFIB_ALGO_COUNT; id++)
		if (algos[id].name && !strcmp(algos[id].name, name))
			return id;
	return -1;
}
