// SPDX-License-Identifier: GPL-2.0-only
/* Which ports carry xfib's XDP program, and how. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpfeat.h"
#include "xfibctl.h"

__u32 xdp_prog_on(int ifindex, __u8 *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	if (mode)
		*mode = q.attach_mode;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		return q.drv_prog_id;
	case XDP_ATTACHED_SKB:
		return q.skb_prog_id;
	case XDP_ATTACHED_HW:
		return q.hw_prog_id;
	case XDP_ATTACHED_MULTI:
		return q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	default:
		return 0;
	}
}

bool prog_is_xfib(__u32 id, char *name, size_t len)
{
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool ours;

	if (fd < 0)
		return false;
	ours = !bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
	       !strcmp(info.name, XFIB_PROG_NAME);
	if (name)
		snprintf(name, len, "%s", info.name);
	close(fd);
	return ours;
}

const char *mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

void ports_attached(struct port **ports, size_t *n)
{
	struct if_nameindex *ifs = if_nameindex(), *it;
	size_t all = 0;

	*ports = NULL;
	*n = 0;
	for (it = ifs; it && it->if_index; it++)
		all++;
	if (all)
		*ports = calloc(all, sizeof(**ports));
	for (it = ifs; *ports && it->if_index; it++) {
		struct port *p = &(*ports)[*n];

		p->prog_id = xdp_prog_on(it->if_index, &p->mode);
		if (!p->prog_id || !prog_is_xfib(p->prog_id, NULL, 0))
			continue;
		snprintf(p->name, sizeof(p->name), "%s", it->if_name);
		p->ifindex = it->if_index;
		(*n)++;
	}
	if (ifs)
		if_freenameindex(ifs);
}

void ports_read_xmit(struct port *ports, size_t n)
{
	struct xdpfeat x;
	size_t i;
	int err = xdpfeat_open(&x, false);

	for (i = 0; i < n; i++) {
		struct port *p = &ports[i];

		p->xmit = err ? -1 : xdpfeat_get(&x, p->ifindex);
		if (p->xmit < 0)
			p->xmit = -1;
		else if (!p->xmit)
			xdpfeat_explain(&x, p->ifindex, p->name, p->no_xmit_why,
					sizeof(p->no_xmit_why));
	}
	if (!err)
		xdpfeat_close(&x);
}
