/*
 * numfmt.h - numbers as Python writes them (SPEC §4, "CSV directory").
 *
 * pandas writes a float with repr(): the shortest decimal that reads back to the same
 * double, in fixed notation when the decimal exponent is in [-4, 16) and scientific
 * otherwise ("0.1", "100.0", "1e-05", "1.2345678901234568e+17"); integers as integers.
 */
#ifndef TL_NUMFMT_H
#define TL_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* Longest text either function writes, NUL included. */
#define TL_NUMFMT_MAX 32

/* Write repr(d) into buf (at least TL_NUMFMT_MAX bytes); returns the length. */
size_t tl_fmt_double(double d, char *buf);

/* Write the decimal integer i into buf (at least TL_NUMFMT_MAX bytes); returns the length. */
size_t tl_fmt_int(int64_t i, char *buf);

#endif
