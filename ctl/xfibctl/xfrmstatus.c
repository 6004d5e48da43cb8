// SPDX-License-Identifier: GPL-2.0-only
/*
 * status: the IPsec (XFRM) policies and states xfibd found, and whether
 * they send a family's packets to the kernel (xfib_xfrm).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "output.h"
#include "xfibctl.h"

void xfrm_status_read(struct xfib_fwd_bpf *skel, struct status *st)
{
	__u32 fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_xfrm), &fam,
				    &st->xfrm[fam]);
}

static const char *plural(__u32 n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Appends ", " (unless first) and fmt's text to buf, at *off. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;

	if (*off)
		*off += snprintf(buf + *off, *off < len ? len - *off : 0, ", ");
	va_start(ap, fmt);
	*off += vsnprintf(buf + *off, *off < len ? len - *off : 0, fmt, ap);
	va_end(ap);
}

/* Why the family goes to the kernel: "1 forward policy, 2 states, ...". */
static void reason_text(const struct xfib_xfrm_info *x, char *buf, size_t len)
{
	size_t off = 0;

	*buf = '\0';
	if (x->fwd_policies)
		append(buf, len, &off, "%u forward %s", x->fwd_policies,
		       plural(x->fwd_policies, "policy", "policies"));
	if (x->out_policies)
		append(buf, len, &off, "%u output %s", x->out_policies,
		       plural(x->out_policies, "policy", "policies"));
	if (x->states)
		append(buf, len, &off, "%u %s", x->states,
		       plural(x->states, "state", "states"));
	if (x->flags & XFIB_XFRM_FWD_BLOCK)
		append(buf, len, &off, "default forward policy block");
	if (x->flags & XFIB_XFRM_OUT_BLOCK)
		append(buf, len, &off, "default output policy block");
	if (x->flags & XFIB_XFRM_ERROR)
		append(buf, len, &off, "policies and states unreadable");
}

void xfrm_status_text(const struct status *st)
{
	char why[160];
	__u32 fam;

	if (!st->xfrm[XFIB_V4].checked) {
		printf("xfrm:        not checked yet\n");
		return;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct xfib_xfrm_info *x = &st->xfrm[fam];

		reason_text(x, why, sizeof(why));
		printf("%s%s: ", fam ? "             " : "xfrm:        ", fam_name(fam));
		if (x->mode == XFIB_XFRM_OFF)
			printf("forward (no IPsec forward/output policies or states)\n");
		else
			printf("to the kernel (IPsec: %s)\n", why);
	}
}

json_object *xfrm_status_json(const struct status *st)
{
	json_object *o = json_object_new_object();
	__u32 fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct xfib_xfrm_info *x = &st->xfrm[fam];
		json_object *f = json_object_new_object();
		char why[160];

		reason_text(x, why, sizeof(why));
		js_set(f, "mode", js_str(x->mode == XFIB_XFRM_OFF ? "forward" : "pass"));
		js_set(f, "reason", js_str(why));
		js_set(f, "forward_policies", js_u64(x->fwd_policies));
		js_set(f, "output_policies", js_u64(x->out_policies));
		js_set(f, "states", js_u64(x->states));
		js_set(f, "default_forward_block", js_bool(x->flags & XFIB_XFRM_FWD_BLOCK));
		js_set(f, "default_output_block", js_bool(x->flags & XFIB_XFRM_OUT_BLOCK));
		js_set(f, "unreadable", js_bool(x->flags & XFIB_XFRM_ERROR));
		js_set(f, "checked", js_u64(x->checked));
		js_set(f, "changes", js_u64(x->changes));
		js_set(o, fam_name(fam), f);
	}
	return o;
}

void xfrm_status_prom(const struct status *st)
{
	__u32 fam;

	printf("# HELP xfib_xfrm_mode_info What the dataplane does about the host's IPsec policies and states (forward, pass: all to the kernel).\n"
	       "# TYPE xfib_xfrm_mode_info gauge\n");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_xfrm_mode_info{family=\"%s\",mode=\"%s\"} 1\n", fam_name(fam),
		       st->xfrm[fam].mode == XFIB_XFRM_OFF ? "forward" : "pass");
}
