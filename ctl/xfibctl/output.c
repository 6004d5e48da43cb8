// SPDX-License-Identifier: GPL-2.0-only
/* The output model (output.h): JSON values, and text forms. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include "dplookup.h"
#include "output.h"
#include "utf8.h"

/* Compact, and "/" as itself: prefixes read "198.18.0.0/24". */
#define JS_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* ---- JSON values --------------------------------------------------------- */

json_object *js_str(const char *s)
{
	json_object *o;
	char *fixed;

	if (utf8_valid(s))
		return json_object_new_string(s);
	fixed = malloc(3 * strlen(s) + 1);
	if (!fixed)
		return NULL;
	o = json_object_new_string_len(fixed, (int)utf8_repair(s, fixed));
	free(fixed);
	return o;
}

json_object *js_u64(__u64 v)
{
	return json_object_new_uint64(v);
}

json_object *js_int(long long v)
{
	return json_object_new_int64(v);
}

json_object *js_bool(bool v)
{
	return json_object_new_boolean(v);
}

json_object *js_fixed(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	/* json-c writes the number as this text, not with its own %.17g. */
	return json_object_new_double_s(v, buf);
}

void js_set(json_object *o, const char *key, json_object *v)
{
	/* Keys are constants and set once: no copy, no search for an old one. */
	if (!o || json_object_object_add_ex(o, key, v,
					    JSON_C_OBJECT_ADD_KEY_IS_NEW |
					    JSON_C_OBJECT_ADD_CONSTANT_KEY))
		json_object_put(v);
}

int out_json(json_object *v)
{
	if (!v) {
		fprintf(stderr, "xfibctl: JSON output: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	printf("%s\n", json_object_to_json_string_ext(v, JS_FLAGS));
	json_object_put(v);
	return 0;
}

void out_list_begin(struct out_list *l)
{
	l->n = 0;
	l->err = 0;
	printf("[");
}

void out_list_add(struct out_list *l, json_object *v)
{
	if (!v) {
		l->err = l->err ?: -ENOMEM;
		return;
	}
	printf("%s%s", l->n++ ? "," : "", json_object_to_json_string_ext(v, JS_FLAGS));
	json_object_put(v);
}

int out_list_end(struct out_list *l)
{
	printf("]\n");
	if (l->err)
		fprintf(stderr, "xfibctl: JSON output: %s\n", strerror(-l->err));
	return l->err;
}

/* ---- text forms ---------------------------------------------------------- */

const char *fam_name(__u32 fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

int af_fam(int af)
{
	return af == AF_INET ? XFIB_V4 : af == AF_INET6 ? XFIB_V6 : -1;
}

int fam_af(int fam)
{
	return fam == XFIB_V4 ? AF_INET : AF_INET6;
}

const char *addr_str(int af, const __u8 *a, char *buf, size_t len)
{
	if (!inet_ntop(af, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

const char *mac_str(const __u8 *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

/* Names are those of our namespace (the router's): ask the kernel, not
 * /sys, which nsenter leaves pointing at another namespace. */
const char *dev_str(__u32 ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

const char *table_str(__u32 table, char *buf, size_t len)
{
	if (table == RT_TABLE_MAIN)
		return "main";
	if (table == RT_TABLE_LOCAL)
		return "local";
	if (table == RT_TABLE_DEFAULT)
		return "default";
	snprintf(buf, len, "%u", table);
	return buf;
}

void nexthop_str(const struct xfib_nexthop *nh, __u32 idx, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (nh->kind == XFIB_NH_GATEWAY)
		snprintf(buf, len, "gateway %s dev %s (nexthop %u)",
			 addr_str(nh->family, nh->gw, a, sizeof(a)),
			 dev_str(nh->ifindex, dev), idx);
	else if (nh->kind == XFIB_NH_CONNECTED)
		snprintf(buf, len, "connected dev %s (nexthop %u)",
			 dev_str(nh->ifindex, dev), idx);
	else
		snprintf(buf, len, "%s (nexthop %u)", dpl_kind_name(nh->kind), idx);
}
