// SPDX-License-Identifier: GPL-2.0-only
/* Checking and repairing UTF-8 (utf8.h). */
#include <string.h>

#include "utf8.h"

static bool in_range(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

/*
 * Length of the valid sequence at s (1 to 4), or 0 if none starts there.
 * The ranges of the second byte are those of RFC 3629's table: E0 A0..BF
 * and F0 90..BF exclude overlong forms, ED 80..9F the surrogates, F4
 * 80..8F everything above U+10FFFF. A NUL ends the string: it fails every
 * continuation test, so nothing past it is read.
 */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return in_range(s[1], 0x80, 0xbf) ? 2 : 0;
	if (c < 0xf0)
		return in_range(s[1], c == 0xe0 ? 0xa0 : 0x80, c == 0xed ? 0x9f : 0xbf) &&
		       in_range(s[2], 0x80, 0xbf) ? 3 : 0;
	return in_range(s[1], c == 0xf0 ? 0x90 : 0x80, c == 0xf4 ? 0x8f : 0xbf) &&
	       in_range(s[2], 0x80, 0xbf) && in_range(s[3], 0x80, 0xbf) ? 4 : 0;
}

bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p; p += n) {
		n = utf8_seq(p);
		if (!n)
			return false;
	}
	return true;
}

size_t utf8_repair(const char *s, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	char *o = out;
	size_t n;

	while (*p) {
		n = utf8_seq(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, UTF8_REPLACEMENT, 3);
			o += 3;
			p++;
		}
	}
	*o = 0;
	return o - out;
}
