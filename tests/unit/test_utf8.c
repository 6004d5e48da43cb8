// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of xfibctl's UTF-8 check and repair (ctl/xfibctl/utf8.c), the
 * guard that keeps JSON and Prometheus output valid whatever bytes an
 * interface name holds. Checked against a reference written differently:
 * it decodes the code point a lead byte announces and judges it by value
 * (shortest form, not a surrogate, at most U+10FFFF), where utf8.c judges
 * by byte ranges.
 *
 * Cases: every scalar value U+0001..U+10FFFF encoded is valid and kept as
 * it is; every surrogate, every overlong form and every 4-byte form above
 * U+10FFFF is invalid; hand-written strings with their expected repairs
 * (truncated sequences, stray continuation bytes, F5..FF); random byte
 * strings, mostly high bytes, repaired exactly as the reference repairs
 * them, into valid UTF-8.
 *
 * Usage: unit_test_utf8 [seed]. The seed is printed first; passing it back
 * replays the same run.
 */
#define TESTLIB_SEED 0x0f8c0de5ull
#include "testlib.h"
#include "utf8.h"

#define R UTF8_REPLACEMENT

/* cp in n bytes (1 to 4), shortest or not: n larger than needed gives an
 * overlong form. Returns n. */
static size_t encode(unsigned long cp, size_t n, char *out)
{
	static const unsigned char lead[] = { 0, 0, 0xc0, 0xe0, 0xf0 };
	size_t i;

	if (n == 1) {
		out[0] = (char)cp;
	} else {
		for (i = n - 1; i > 0; i--, cp >>= 6)
			out[i] = (char)(0x80 | (cp & 0x3f));
		out[0] = (char)(lead[n] | cp);
	}
	out[n] = 0;
	return n;
}

/* Reference: the length of the valid sequence at s, or 0. */
static size_t ref_seq(const unsigned char *s)
{
	static const unsigned long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	unsigned long cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static size_t ref_repair(const char *s, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	char *o = out;
	size_t n;

	while (*p) {
		n = ref_seq(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, R, 3);
			o += 3;
			p++;
		}
	}
	*o = 0;
	return o - out;
}

static unsigned int n_cases;

static void check_repair(const char *in, const char *want)
{
	char out[256];
	size_t n;

	n = utf8_repair(in, out);
	CHECK(n == strlen(out), "repair of %zu bytes: length %zu, wrote %zu", strlen(in),
	      n, strlen(out));
	CHECK(!strcmp(out, want), "repair of \"%s\" is \"%s\", want \"%s\"", in, out, want);
	CHECK(utf8_valid(out), "repair of \"%s\" is not valid", in);
	CHECK(utf8_valid(in) == !strcmp(in, want), "\"%s\": valid %d", in, utf8_valid(in));
	n_cases++;
}

static void test_scalars(void)
{
	unsigned long cp, good = 0, bad = 0;
	char s[8], out[32];
	size_t n, len;

	cur_test = "scalars";
	for (cp = 1; cp <= 0x10ffff; cp++) {
		len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		encode(cp, len, s);
		if (cp >= 0xd800 && cp <= 0xdfff) {
			/* A surrogate: each of its three bytes is replaced. */
			CHECK(!utf8_valid(s), "surrogate U+%04lX valid", cp);
			utf8_repair(s, out);
			CHECK(!strcmp(out, R R R), "surrogate U+%04lX repaired badly", cp);
			bad++;
			continue;
		}
		CHECK(utf8_valid(s), "U+%04lX invalid", cp);
		n = utf8_repair(s, out);
		CHECK(n == len && !memcmp(out, s, len + 1), "U+%04lX changed", cp);
		good++;
		/* Every shorter form is overlong. */
		for (n = len + 1; n <= 4; n++) {
			encode(cp, n, s);
			CHECK(!utf8_valid(s), "U+%04lX in %zu bytes valid", cp, n);
			CHECK(ref_seq((unsigned char *)s) == 0, "reference takes an overlong");
			bad++;
		}
	}
	/* Above U+10FFFF, still in four bytes. */
	for (cp = 0x110000; cp < 0x200000; cp += 0x123) {
		encode(cp, 4, s);
		CHECK(!utf8_valid(s), "U+%lX valid", cp);
		bad++;
	}
	printf("scalars: %lu valid kept, %lu invalid refused\n", good, bad);
}

static void test_cases(void)
{
	cur_test = "cases";
	check_repair("", "");
	check_repair("r-sink", "r-sink");
	check_repair("x\xffy", "x" R "y");
	check_repair("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9");
	check_repair("\xc3", R);                       /* truncated at the end */
	check_repair("\xe2\x82", R R);
	check_repair("\xf0\x9f\x98", R R R);
	check_repair("\xe2\x82x", R R "x");
	check_repair("\x80\xbf", R R);                 /* stray continuations */
	check_repair("\xc0\xaf", R R);                 /* overlong "/" */
	check_repair("\xe0\x80\xaf", R R R);
	check_repair("\xed\xa0\x80", R R R);           /* U+D800 */
	check_repair("\xf4\x90\x80\x80", R R R R);     /* U+110000 */
	check_repair("\xf5\xf8\xfe\xff", R R R R);
	check_repair("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
	check_repair("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	check_repair("a\xc3\xa9\xff\xc3\xa9", "a\xc3\xa9" R "\xc3\xa9");
	printf("cases: %u strings\n", n_cases);
}

static void test_random(void)
{
	char in[64], out[3 * sizeof(in)], want[3 * sizeof(in)];
	unsigned long i, fixed = 0;
	size_t len, j, n;

	cur_test = "random";
	for (i = 0; i < 1000000; i++) {
		len = rnd_below(sizeof(in) - 1);
		for (j = 0; j < len; j++) {
			/* Mostly high bytes, where the sequences are. */
			in[j] = (char)(rnd_below(4) ? 0x80 + rnd_below(0x80) : 1 + rnd_below(0x7f));
		}
		in[len] = 0;
		n = utf8_repair(in, out);
		CHECK(n == ref_repair(in, want) && !strcmp(out, want),
		      "string %lu of %zu bytes repaired unlike the reference", i, len);
		CHECK(utf8_valid(out), "string %lu: repair not valid", i);
		CHECK(utf8_valid(in) == !strcmp(in, out), "string %lu: valid %d",
		      i, utf8_valid(in));
		fixed += strcmp(in, out) != 0;
	}
	printf("random: %lu strings, %lu repaired\n", i, fixed);
}

int main(int argc, char **argv)
{
	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	test_scalars();
	test_cases();
	test_random();
	printf("PASS\n");
	return 0;
}
