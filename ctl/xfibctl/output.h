/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xfibctl's output model. A command gathers its result into a struct once,
 * then renders that struct either as text (printf, the format the golden
 * files in tests/golden/cli fix) or as a JSON value built with json-c and
 * written by out_json(). Lists that can be long (routes, nexthops,
 * neighbours) are written an element at a time through struct out_list, so
 * a million routes never sit in memory as JSON objects.
 *
 * JSON is compact (no spaces), one document per line, keys in the order
 * they are set. Every string goes through js_str(), which makes it valid
 * UTF-8: interface names are arbitrary bytes to the kernel.
 */
#ifndef XFIBCTL_OUTPUT_H
#define XFIBCTL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include <linux/types.h>

#include "xfib/maps.h"

/* ---- JSON values --------------------------------------------------------- */

/* A string; bytes that are not valid UTF-8 become U+FFFD, one per byte. */
json_object *js_str(const char *s);
json_object *js_u64(__u64 v);
json_object *js_int(long long v);
json_object *js_bool(bool v);
/* A number written with exactly decimals digits after the point, as
 * printf's "%.*f" writes it. */
json_object *js_fixed(double v, int decimals);
/* Sets o[key] = v, taking v; v NULL is JSON null. key must outlive o (a
 * string constant or a static table's entry). */
void js_set(json_object *o, const char *key, json_object *v);

/* Writes v and a newline to stdout, and frees v. 0, or -ENOMEM if v is
 * NULL (an allocation failed while building it). */
int out_json(json_object *v);

/* A JSON array written element by element: "[", elements, "]\n". */
struct out_list {
	unsigned long n;
	int err;        /* first failure: -ENOMEM */
};

void out_list_begin(struct out_list *l);
/* Writes v as the next element and frees v. */
void out_list_add(struct out_list *l, json_object *v);
/* Closes the array: 0 or the first failure. */
int out_list_end(struct out_list *l);

/* ---- text forms shared by the commands -------------------------------------- */

/* "ipv4" or "ipv6" for XFIB_V4 / XFIB_V6. */
const char *fam_name(__u32 fam);
/* XFIB_V4 / XFIB_V6 of an AF_INET / AF_INET6, else -1. */
int af_fam(int af);
/* AF_INET / AF_INET6 of XFIB_V4 / XFIB_V6. */
int fam_af(int fam);
/* An address of family af (AF_*), "?" if it cannot be written. */
const char *addr_str(int af, const __u8 *a, char *buf, size_t len);
/* "aa:bb:cc:dd:ee:ff"; buf of at least 18 bytes. */
const char *mac_str(const __u8 *m, char *buf, size_t len);
/* The interface's name in our namespace, else "if<N>"; buf IF_NAMESIZE. */
const char *dev_str(__u32 ifindex, char *buf);
/* "main", "local", "default", or the number. */
const char *table_str(__u32 table, char *buf, size_t len);
/* xfib's answer in a few words: "gateway 198.18.2.2 dev r-sink (nexthop 5)". */
void nexthop_str(const struct xfib_nexthop *nh, __u32 idx, char *buf, size_t len);

#endif /* XFIBCTL_OUTPUT_H */
