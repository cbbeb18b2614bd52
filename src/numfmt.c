/*
 * numfmt.c - Python-style number formatting (see numfmt.h).
 */
#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The shortest round-trip digits of d (d finite, > 0): sets digits (no dot, no leading
 * or trailing zeros) and returns the decimal exponent of the first digit.
 *
 * If some decimal of p <= 15 significant digits reads back to d, then rounding d to 15
 * digits yields exactly that decimal (a double carries more than 15.9 digits, so d lies
 * within half a 15-digit step of it); the correctly rounded 16- and 17-digit forms are
 * the closest of their length, so the first of 15, 16, 17 digits that round-trips,
 * stripped of trailing zeros, is the shortest, and the closest among the shortest:
 * exactly what repr() picks.  Subnormals carry fewer digits, so for them every
 * length is tried from 1 up.
 */
static int shortest_digits(double d, char *digits, size_t *ndigits)
{
    char tmp[40];
    for (int prec = d < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (prec == 17 || strtod(tmp, NULL) == d)
            break;
    }
    /* tmp is "D.DDDDe[+-]XX" */
    char *e = strchr(tmp, 'e');
    int exp10 = atoi(e + 1);
    size_t n = 0;
    for (char *p = tmp; p < e; p++)
        if (*p != '.')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *ndigits = n;
    return exp10;
}

size_t tl_fmt_double(double d, char *buf)
{
    char *p = buf;
    if (isnan(d))
        return (size_t)(strcpy(buf, "nan"), 3);
    if (signbit(d)) {
        *p++ = '-';
        d = -d;
    }
    if (isinf(d)) {
        strcpy(p, "inf");
        return (size_t)(p - buf) + 3;
    }
    if (d == 0) {
        strcpy(p, "0.0");
        return (size_t)(p - buf) + 3;
    }
    char digits[24];
    size_t n;
    int exp10 = shortest_digits(d, digits, &n);
    if (exp10 >= -4 && exp10 < 16) {
        int decpt = exp10 + 1; /* digits before the decimal point */
        if (decpt <= 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -decpt; i++)
                *p++ = '0';
            memcpy(p, digits, n);
            p += n;
        } else if ((size_t)decpt >= n) {
            memcpy(p, digits, n);
            p += n;
            for (size_t i = n; i < (size_t)decpt; i++)
                *p++ = '0';
            *p++ = '.';
            *p++ = '0';
        } else {
            memcpy(p, digits, (size_t)decpt);
            p += decpt;
            *p++ = '.';
            memcpy(p, digits + decpt, n - (size_t)decpt);
            p += n - (size_t)decpt;
        }
        *p = '\0';
        return (size_t)(p - buf);
    }
    *p++ = digits[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, digits + 1, n - 1);
        p += n - 1;
    }
    p += sprintf(p, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    return (size_t)(p - buf);
}

size_t tl_fmt_int(int64_t i, char *buf)
{
    char tmp[24];
    size_t n = 0;
    /* Work on the unsigned magnitude so INT64_MIN is fine. */
    uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    char *p = buf;
    if (i < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    *p = '\0';
    return (size_t)(p - buf);
}
