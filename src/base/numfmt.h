/*
 * numfmt.h - numbers to and from text.
 *
 * To text, as Python writes them (SPEC §4, "CSV directory"): pandas writes a float with
 * repr(): the shortest decimal that reads back to the same double, in fixed notation
 * when the decimal exponent is in [-4, 16) and scientific otherwise ("0.1", "100.0",
 * "1e-05", "1.2345678901234568e+17"); integers as integers.
 *
 * From text: the correctly rounded double of a decimal of up to 19 significant digits,
 * for the number parser of table.c (which handles the grammar and the sign).
 *
 * The functions build their tables on first use and are safe to call from any thread.
 */
#ifndef TL_NUMFMT_H
#define TL_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* The room either function needs: the longest text is 24 characters and a NUL
 * ("-1.2345678901234567e-308"), and they store whole 8- and 16-byte words, so they may
 * also write scratch bytes after the NUL, within the first 27 (tests/test_numfmt.c). */
#define TL_NUMFMT_MAX 32

/* Write repr(d) into buf (at least TL_NUMFMT_MAX bytes); returns the length. */
size_t tl_fmt_double(double d, char *buf);

/* Write the decimal integer i into buf (at least TL_NUMFMT_MAX bytes); returns the length. */
size_t tl_fmt_int(int64_t i, char *buf);

/* The double nearest to w * 10^q (round half to even, as strtod rounds), in *out:
 * returns 1, or 0 when the fast method (Eisel-Lemire: a 128-bit product with 10^q) leaves
 * it undecided, and the caller must use strtod.  It declines values below 2^-1022
 * (subnormal results, and those that round up to DBL_MIN) and, with a probability
 * around 2^-74, inputs whose product falls too close to a rounding midpoint.  w = 0 and
 * q below -342 give +0.0; q above 308 (w > 0) and overflow give +inf.  The sign is the
 * caller's. */
int tl_decimal_to_double(uint64_t w, int q, double *out);

#endif
