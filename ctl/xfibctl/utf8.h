/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * UTF-8 as JSON (RFC 8259) and the Prometheus text format need it: no
 * overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
 * Interface names are arbitrary bytes to the kernel, so names are repaired
 * before they are written in those formats.
 */
#ifndef XFIBCTL_UTF8_H
#define XFIBCTL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The bytes U+FFFD, the replacement character, takes in UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Whether the NUL-terminated s is valid UTF-8. */
bool utf8_valid(const char *s);

/*
 * s with every byte that does not start a valid sequence replaced by
 * U+FFFD, written to out (room for 3 * strlen(s) + 1 bytes) and
 * NUL-terminated. Returns the length written, without the NUL.
 */
size_t utf8_repair(const char *s, char *out);

#endif /* XFIBCTL_UTF8_H */
