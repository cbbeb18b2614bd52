/*
 * numfmt.c - Python-style number formatting, and decimal to double (see numfmt.h).
 *
 * Shortest round-trip digits
 * --------------------------
 * repr(d) prints the decimal with the fewest significant digits that reads back (under
 * round-to-nearest-even) to d and, among those, the one closest to d, an exact tie going
 * to the even last digit.  We find it with the scaled products Ryu uses (Ulf Adams, "Ryu:
 * fast float-to-string conversion", PLDI 2018), at the one decimal scale Schubfach picks
 * (Raffaello Giulietti, "The Schubfach way to render doubles", 2020) for the common
 * case, all written afresh here with 128-bit multipliers and checks of their own.
 *
 * The rounding interval.  A finite d > 0 is m * 2^e (53-bit m).  Scaled by 4, it is
 * mv * 2^e2 with mv = 4m and e2 = e - 2; the decimals that read back to d are exactly
 * those between the midpoints to its neighbours, mm * 2^e2 and mp * 2^e2, where
 * mp = mv + 2 and mm = mv - 2 (mm = mv - 1 when d is a power of two above DBL_MIN,
 * whose lower neighbour is twice as close).  Midpoints round to even, so the bounds
 * belong to the interval iff m is even.
 *
 * The common path: every double but the powers of two above DBL_MIN.  At the scale
 * 10^k, k = floor(log10 2^(e2 + 2)), let y(x) = x * 2^e2 / 10^k: the interval
 * [y(mm), y(mp)] is 4 * 2^e2 / 10^k wide, in [1, 10).  So it holds at least one integer
 * (a candidate: a decimal with this many digits that reads back to d) and at most one
 * multiple of 10, which, if there is one, is 10 floor(s / 10) or the next one up
 * (s = floor(y(mv)), and y(mv) lies in the interval).  That multiple, when there is
 * one, is the answer: the only candidate one scale up, and every shorter decimal would
 * be a candidate there too; its trailing zeros removed.  Otherwise the answer has the
 * digits of this scale, s or s + 1, whichever lies in the interval, or the one closer
 * to y(mv) when both do (an exact tie: the even one); it cannot end in 0.
 *   We get each y(x) as (x << delta) * fk_m / 2^128, fk_m = 2^(fk_e2 + 128) / 10^k in
 * [2^126, 2^127) (one per k) and delta = e2 - fk_e2 in [0, 3] (x << delta < 2^58): a
 * 64 x 128-bit product whose top 64 bits are floor(y) (y < 2^57) and the next 64 the
 * top bits f of its fraction.  Their exactness:
 *   - for k in [-54, 0], fk_m is 5^-k times a power of two, exact, and so are floor(y)
 *     and f.  y = x * 5^-k * 2^(e2 - k) is an integer iff 2^(k - e2) divides x: y(mm)
 *     and y(mp) (x = 2 (2m -+ 1)) iff e2 - k >= -1; y(mv) (x = 4m) is s + 1/2 iff m
 *     has k - e2 - 3 trailing zero bits, and otherwise f = 2^63 means a fraction a
 *     little above 1/2;
 *   - for k > 0, fk_m is rounded up, so each computed y is above the true one by less
 *     than 2^58 / 2^128 = 2^-70.  y = x * 2^(e2 - k) / 5^k (e2 - k >= 1) is a multiple
 *     of 5^-k: when not an integer, its fraction lies at least 5^-k from 0 and 1, and
 *     half that from 1/2 (never 1/2 itself), which for k <= 27 is more than 2^-64.  So
 *     there floor(y) is right, f = 0 iff y is an integer, and f compares with 2^63 as
 *     the fraction does with 1/2.  Beyond k = 27, y is never an integer (x < 2^55 <
 *     5^24), and f = 0 or f = 2^63 leaves it in doubt: the general path decides;
 *   - for k < -54, fk_m is rounded down: each y is below the true one by less than
 *     2^-70, and never an integer or a half (e2 - k <= -127: 2^126 would have to divide
 *     x).  f all ones (the fraction within 2^-64 of 1) or 2^63 - 1 (just under 1/2) is
 *     in doubt, and the general path decides.
 * So the common path leaves about one number in 2^62 to the general path, besides the
 * powers of two.  The tests' 10 million random doubles have none.
 *
 * The general path.  With e10 = floor(e2 * log10 2) - 1 the ratio R = 2^e2 / 10^e10
 * lies in [10, 100), so at the scale 10^e10 each of y = x * R (x = mm, mv, mp) is below
 * 2^62 and the interval is at least 3R >= 30 units wide.  We need floor(y) and whether
 * y is an integer, for the three x.  For e10 >= 0, y = x * 2^(e2-e10) / 5^e10 and we
 * multiply x by ceil(2^b / 5^e10), a 128-bit number with its top bit set; for e10 < 0,
 * y = x * 5^-e10 * 2^(e2+e10) and we multiply by floor(5^-e10 / 2^b), which is 5^-e10
 * itself, shifted, whenever it has at most 128 bits (-e10 <= 55).  The 192-bit product,
 * read as a fixed-point number with 121..124 fraction bits, is y within 2^-65 (relative
 * error under 2^-127, and y < 2^62).  Its integer part can then only differ from
 * floor(y) when its fraction lies within 2^-65 of a whole number:
 *   - the multiplier for e10 >= 0 is rounded up, so the approximation is too big.  Its
 *     fraction is then near 0: either y is an integer (5^e10 divides x; possible only
 *     for e10 <= 23, as x < 2^55 < 5^24, and checked exactly by division) and all is
 *     well, or y lies just below a whole number.  For e10 <= 23 that cannot happen
 *     (a non-integer y has a fraction of at least 5^-23 > 2^-57); above it we take
 *     the slow path (shortest_digits_slow);
 *   - the multiplier for e10 < 0 is exact up to -e10 = 55 (y is an integer iff the
 *     fraction bits are all zero), and rounded down beyond, where y is never an
 *     integer (that would need 2^122 to divide x); a fraction just below 1 takes the
 *     slow path.
 * We test the top 57..60 bits of the fraction (all zeros, resp. all ones), a superset
 * of the doubtful cases, so the slow path is taken with a probability around 2^-56 per
 * number.  Ryu's paper bounds, by a search over all exponents, how close such products
 * come to an integer, and concludes that narrower multipliers already suffice; the check
 * keeps correctness from resting on that search.  (No fallback in the tests' 10 million
 * random doubles.)
 *
 * Shortening.  At scale 10^(e10+k) the candidates are the integers c with
 * c * 10^k in [vm, vp] (vm = floor(y(mm)), vp = floor(y(mp)), less one when y(mp) is an
 * integer the interval excludes), except vm itself unless y(mm) is that integer and the
 * bounds belong to the interval.  A candidate at a coarser scale is one at every finer
 * scale, so we drop the last digit of vm, vr = floor(y(mv)) and vp while vp / 10 >
 * vm / 10 (a candidate above vm exists one scale up), then, when vm is itself a
 * candidate, while its last digit is 0.  The interval is at least 30 units wide at the
 * start, so at least one digit goes and the last removed digit of vr, with whether
 * every digit below it (and y's own fraction) was zero, says how y(mv) rounds at the
 * final scale: up from .5, or to even on an exact tie.  The rounded value is the
 * candidate closest to d: it never passes vp (d would then lie within half a unit of
 * the upper bound, hence of the lower one too, and the scale would hold no candidate),
 * and when it equals vm but vm is not a candidate, vm + 1 is the closest.  It is the
 * shortest: any decimal with fewer digits would be a candidate at a coarser scale.
 * When a single candidate is left one scale up, it is the answer whatever the rounding,
 * so the loop then stops and strips its trailing zeros by a few divisibility tests
 * rather than a digit at a time.
 *
 * Writing.  The digits, padded with zeros to 17 (c17), go out as 8 + 8 + 1: each group
 * of 8 split into digits without a division, by multiplying with reciprocals that are
 * exact in range, lane by lane in one register (by 10^4 into two 32-bit halves, each by
 * 100 into 16-bit quarters, each by 10 into bytes); with SSE2 both groups at once.  The
 * significant digits end at the last digit byte that is not '0'.  The decimal point
 * goes in by masks (the bytes before it stay, the others move up one), the padding
 * serving as the integer part's trailing zeros and the ".0".  Words are stored whole:
 * a call may write scratch bytes past the NUL, within 27 bytes of buf.  tl_fmt_int
 * does the same with its groups of 8, leading zeros shifted out.
 *
 * Decimal to double
 * -----------------
 * tl_decimal_to_double rounds w * 10^q (w < 2^64) the way of Eisel and Lemire (Daniel
 * Lemire, "Number Parsing at a Gigabyte per Second", Software: Practice and Experience,
 * 2021), written afresh here with its own check of when the product decides.  With w
 * shifted left until its top bit is set (x = w * 2^l) and 10^q = (T + f) * 2^E, T the
 * 128 bits of 10^q truncated (so 0 <= f < 1, f = 0 for q in [0, 55], where 5^q has at
 * most 128 bits), the scaled value X = x * 10^q / 2^E lies in [P, P + x) for the 192-bit
 * P = x * T, and equals P when f = 0.  The result's 53 bits are the top ones of P
 * (P >= 2^190), and the rounding is decided by the bits below: above a midpoint (the
 * bit after the 53 set, the rest zero) round up, below it round down, at it to even.
 * The rounding of X can only differ from P's when [P, P + x) reaches a midpoint; as
 * x < 2^64 and midpoints are 2^138 or more apart, that takes the 137 or 138 bits under
 * P's rounding bit to be all ones (the rounding bit clear) with a carry when x is added
 * to the lowest 64, or all zeros (P itself a midpoint, with X above it unless f = 0).
 * Most of the time the top 128 bits of P, from T's high half alone, settle it: they are
 * short of P / 2^64 by less than 2^64, which can only matter when the 9 or 10 bits of
 * the top word under the rounding bit are all ones (or all zero with the second word),
 * and only then, about one time in 500 to 1000, does the low half of T join in.  What
 * stays in doubt with f > 0 (about one random input in 2^74) is declined, but for the
 * true ties with q < 0 (which need q >= -4: a midpoint has 54 significant bits and
 * w < 2^64), which are dyadic and computed exactly.  Results below 2^-1022 are declined
 * too: their rounding position differs.  The caller (tl_text_to_number) then uses strtod.
 *
 * The multiplier tables (the powers of 5 up to 5^342 and their reciprocals, the common
 * path's and the parser's powers of 10 taken from both) are computed exactly with a small
 * big-number routine on first use, under pthread_once (about 50 microseconds).
 */
#include "base/numfmt.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(TL_NUMFMT_NO_SIMD)
#include <emmintrin.h>
#define NUMFMT_SSE2 1
#endif

__extension__ typedef unsigned __int128 u128;

/* ---- the slow reference ------------------------------------------------------------ */

/*
 * The shortest round-trip digits of d (d finite, > 0), the simple way: sets digits (no
 * dot, no leading or trailing zeros) and returns the decimal exponent of the first digit.
 *
 * If some decimal of p <= 15 significant digits reads back to d, it is the only 15-digit
 * decimal that does (a double carries more than 15.9 digits, so 15-digit steps are wider
 * than the interval of decimals that read back to d) and one of the two 15-digit
 * neighbours of d.  Rounding d to p digits gives the closer neighbour; when it does not
 * read back, the other one may still: the interval reaches twice as far above a power
 * of two as below it.  So at 15, 16 and 17 digits we try the rounded decimal, then, for
 * a power of two rounded down, the next one up: the first that reads back, stripped of
 * trailing zeros, is the shortest and the closest among the shortest, as repr() picks.
 * Subnormals carry fewer digits, so for them every length is tried from 1 up.  About
 * 1 us a number: the general path falls back on it only when its product is in doubt.
 */
static int shortest_digits_slow(double d, char *digits, size_t *ndigits)
{
    char tmp[40];
    int exp2;
    bool pow2 = d >= DBL_MIN && frexp(d, &exp2) == 0.5;
    size_t n = 0;
    int exp10 = 0;
    for (int prec = d < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        /* tmp is "D.DDDDe[+-]XX" */
        char *e = strchr(tmp, 'e');
        exp10 = atoi(e + 1);
        n = 0;
        for (char *p = tmp; p < e; p++)
            if (*p != '.')
                digits[n++] = *p;
        double back = strtod(tmp, NULL);
        if (back == d || prec == 17)
            break;
        if (pow2 && back < d) {
            /* the p-digit decimal above d */
            size_t i = n;
            while (i > 0 && digits[i - 1] == '9')
                digits[--i] = '0';
            if (i > 0) {
                digits[i - 1]++;
            } else {
                digits[0] = '1';
                exp10++;
            }
            snprintf(tmp, sizeof tmp, "%c.%.*se%d", digits[0], (int)n - 1, digits + 1, exp10);
            if (strtod(tmp, NULL) == d)
                break;
        }
    }
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *ndigits = n;
    return exp10;
}

/* ---- the multiplier tables --------------------------------------------------------- */

#define POW5_MAX 325 /* largest -e10 of the formatter: e2 = -1076 (subnormals) */
#define INV5_MAX 292 /* largest e10 (general path: 290) or k (common path: 292) */
#define EL_Q_MIN (-342) /* the parser's decimal exponents (see tl_decimal_to_double) */
#define EL_Q_MAX 308

/* pow5_m[n] = floor(5^n / 2^pow5_b[n]), in [2^127, 2^128). */
static u128 pow5_m[POW5_MAX + 1];
static int pow5_b[POW5_MAX + 1];
/* inv5_m[q] = ceil(2^inv5_b[q] / 5^q), in [2^127, 2^128). */
static u128 inv5_m[INV5_MAX + 1];
static int inv5_b[INV5_MAX + 1];
/* The common path's multipliers, for k in [FK_MIN, FK_MAX]: fk_m = 2^(fk_e2 + 128) / 10^k
 * in [2^126, 2^127), rounded up for k > 0, down for k < 0, exact for k in [-54, 0]
 * (5^-k times a power of two).  Index k - FK_MIN. */
#define FK_MIN (-324) /* k of the subnormals: e2 = -1076 */
#define FK_MAX 292    /* k of DBL_MAX: e2 = 969 */
static u128 fk_m[FK_MAX - FK_MIN + 1];
/* For e2 in [-1076, 969] (index e2 + 1076): k - FK_MIN, shifted left 2, and delta = e2 -
 * fk_e2(k), in [0, 3], where k = floor(log10(2^(e2 + 2))). */
static uint16_t fk_of_e2[969 + 1076 + 1];
/* Putting '.' before byte dp (1..16) of a 16-byte word: the bytes below it stay, the
 * others move up one; below[dp] masks the first, dot[dp] is the '.' in its place. */
static u128 ins_below[17], ins_dot[17];
/* 5^q for q <= 27, for the exact divisibility tests. */
static uint64_t pow5_64[28];
/* For the parser, 10^q truncated to 128 bits, for q in [EL_Q_MIN, EL_Q_MAX]: 10^q lies
 * in [el_m, el_m + 1) * 2^el_e, el_m in [2^127, 2^128), el_m exact for q in [0, 55].
 * That is floor(5^q / 2^b) * 2^(b + q) for q >= 0 (pow5_m) and floor(2^b / 5^-q) *
 * 2^(q - b) for q < 0 (inv5_m less one, where it reaches).  Index q - EL_Q_MIN. */
static u128 el_m[EL_Q_MAX - EL_Q_MIN + 1];
static int16_t el_e[EL_Q_MAX - EL_Q_MIN + 1];

/* Little-endian 32-bit limbs, enough for 2^960 (5^342 < 2^795). */
#define BIG_LIMBS 31
#define INV_P 960 /* the reciprocals come from floor(2^INV_P / 5^q): 128 bits or more */

static int big_bitlen(const uint32_t *w)
{
    for (int i = BIG_LIMBS - 1; i >= 0; i--)
        if (w[i])
            return i * 32 + 32 - __builtin_clz(w[i]);
    return 0;
}

static uint32_t big_limb(const uint32_t *w, int i)
{
    return i >= 0 && i < BIG_LIMBS ? w[i] : 0;
}

/* floor(A / 2^lo) mod 2^128; lo < 0 shifts left. */
static u128 big_bits(const uint32_t *w, int lo)
{
    /* lo = 32 k + s, 0 <= s < 32: the five limbs from k hold the 128 bits wanted. */
    int k = lo >= 0 ? lo / 32 : -((31 - lo) / 32), s = lo - 32 * k;
    u128 v = 0;
    for (int j = 4; j >= 1; j--)
        v = v << 32 | big_limb(w, k + j);
    return v << (32 - s) | big_limb(w, k) >> s;
}

static void big_mul5(uint32_t *w)
{
    uint64_t carry = 0;
    for (int i = 0; i < BIG_LIMBS; i++) {
        uint64_t t = (uint64_t)w[i] * 5 + carry;
        w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry)
        abort();
}

static void big_div5(uint32_t *w)
{
    uint64_t rem = 0;
    for (int i = BIG_LIMBS - 1; i >= 0; i--) {
        uint64_t cur = rem << 32 | w[i];
        w[i] = (uint32_t)(cur / 5);
        rem = cur % 5;
    }
}

/* floor(e2 * log10(2)) for |e2| <= 2000: 1292913986 / 2^32 is log10(2) less at most
 * 2^-32, and no |e2| below 2136 puts e2 * log10(2) within 5e-4 of an integer (but 0). */
static int floor_log10_pow2(int e2)
{
    uint64_t t = (uint64_t)((int64_t)e2 * 1292913986 + ((int64_t)2000 << 32));
    return (int)(t >> 32) - 2000;
}

static atomic_bool tables_built;

static void init_tables(void)
{
    uint32_t w[BIG_LIMBS] = {1};
    int len5[-EL_Q_MIN + 1]; /* bit length of 5^n */
    for (int n = 0; n <= -EL_Q_MIN; n++) {
        if (n)
            big_mul5(w);
        int len = big_bitlen(w);
        len5[n] = len;
        if (n <= POW5_MAX) {
            pow5_b[n] = len - 128;
            pow5_m[n] = big_bits(w, len - 128);
        }
        if (n < 28)
            pow5_64[n] = (uint64_t)big_bits(w, 0);
    }
    /* w = floor(2^INV_P / 5^q): floor(floor(a / b) / c) = floor(a / (b c)) keeps it exact. */
    memset(w, 0, sizeof w);
    w[INV_P / 32] = 1u << (INV_P % 32);
    for (int q = 0; q <= -EL_Q_MIN; q++) {
        if (q)
            big_div5(w);
        /* 2^(len-1) < 5^q < 2^len (len its bit length), except 5^0 = 2^0: len = 0. */
        int len = q ? len5[q] : 0;
        int b = len + 127;
        /* floor(2^b / 5^q), below 2^128; plus one unless exact (q = 0). */
        if (big_bitlen(w) > INV_P - b + 128)
            abort();
        u128 f = big_bits(w, INV_P - b);
        if (!(f >> 127) || (q && f == ~(u128)0))
            abort();
        if (q <= INV5_MAX) {
            inv5_b[q] = b;
            inv5_m[q] = f + (q != 0);
        }
        if (q) {
            el_m[-q - EL_Q_MIN] = f;
            el_e[-q - EL_Q_MIN] = (int16_t)(-q - b);
        }
    }
    for (int q = 0; q <= EL_Q_MAX; q++) {
        el_m[q - EL_Q_MIN] = pow5_m[q];
        el_e[q - EL_Q_MIN] = (int16_t)(pow5_b[q] + q);
    }
    /* The common path's multipliers, from the same ones halved: ceil(ceil(a / b) / 2) =
     * ceil(a / 2b) and floor(floor(a / b) / 2) = floor(a / 2b).  For k < 0, 5^-k /
     * 2^(pow5_b + 1) is 2^(fk_e2 + 128) * 10^-k when fk_e2 = -pow5_b - 129 + k; for k >= 0,
     * 2^(inv5_b - 1) / 5^k is 2^(fk_e2 + 128) / 10^k when fk_e2 = inv5_b - 129 + k. */
    int16_t fk_e2[FK_MAX - FK_MIN + 1];
    for (int k = FK_MIN; k <= FK_MAX; k++) {
        u128 m;
        int e;
        if (k < 0) {
            if ((-k <= 54) != (pow5_b[-k] <= -1)) /* exact iff -k <= 54 */
                abort();
            m = pow5_m[-k] >> 1;
            e = -pow5_b[-k] - 129 + k;
        } else {
            m = (inv5_m[k] >> 1) + (inv5_m[k] & 1);
            e = inv5_b[k] - 129 + k;
        }
        if (m >> 127 || !(m >> 126))
            abort();
        fk_m[k - FK_MIN] = m;
        fk_e2[k - FK_MIN] = (int16_t)e;
    }
    /* The shifts the general path relies on (see mul_shift). */
    for (int e2 = -1076; e2 <= 969; e2++) {
        int e10 = floor_log10_pow2(e2) - 1;
        int sh = e10 >= 0 ? inv5_b[e10] - e2 + e10 : -(pow5_b[-e10] + e2 - e10);
        if (e10 > INV5_MAX || -e10 > POW5_MAX || sh < 121 || sh > 124)
            abort();
        /* and those of the common path: 0 <= delta <= 3 */
        int k = floor_log10_pow2(e2 + 2);
        if (k < FK_MIN || k > FK_MAX || e2 < fk_e2[k - FK_MIN] || e2 > fk_e2[k - FK_MIN] + 3)
            abort();
        fk_of_e2[e2 + 1076] = (uint16_t)((k - FK_MIN) << 2 | (e2 - fk_e2[k - FK_MIN]));
    }
    for (int dp = 1; dp <= 16; dp++) {
        ins_below[dp] = ~(u128)0 >> (128 - 8 * dp);
        ins_dot[dp] = dp < 16 ? (u128)'.' << (8 * dp) : 0;
    }
    atomic_store_explicit(&tables_built, true, memory_order_release);
}

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* The tables, built by the first caller (any thread; the others wait for it). */
static inline void need_tables(void)
{
    if (!atomic_load_explicit(&tables_built, memory_order_acquire))
        pthread_once(&tables_once, init_tables);
}

/* ---- the general path -------------------------------------------------------------- */

/*
 * floor(x * m / 2^sh) for sh in [121, 124]; *frac gets the top sh - 64 bits of the
 * fraction, *low the 64 bits below them.
 */
static inline uint64_t mul_shift(uint64_t x, u128 m, int sh, uint64_t *frac, uint64_t *low)
{
    u128 a = (u128)x * (uint64_t)m;
    u128 b = (u128)x * (uint64_t)(m >> 64);
    u128 mid = (a >> 64) + (uint64_t)b;
    uint64_t hi = (uint64_t)(b >> 64) + (uint64_t)(mid >> 64);
    uint64_t p1 = (uint64_t)mid;
    int s = sh - 64;
    *frac = p1 & (((uint64_t)1 << s) - 1);
    *low = (uint64_t)a;
    return hi << (64 - s) | p1 >> s;
}

/*
 * The shortest digits of the positive finite double with these bits, as an integer
 * *out and the decimal exponent of its last digit; false when the product is in doubt
 * (never seen in practice: see the top of the file).  Powers of two come here, and
 * whatever the common path leaves in doubt.
 */
static bool shortest_general(uint64_t bits, uint64_t *out, int *exp10)
{
    uint64_t frac = bits & (((uint64_t)1 << 52) - 1);
    int bexp = (int)(bits >> 52);
    uint64_t m2 = bexp ? frac | (uint64_t)1 << 52 : frac;
    int e2 = (bexp ? bexp : 1) - 1075 - 2;
    bool even = (m2 & 1) == 0;
    uint64_t x[3] = {4 * m2 - 1 - (frac != 0 || bexp <= 1), 4 * m2, 4 * m2 + 2};
    uint64_t v[3];
    bool exact[3];
    int e10 = floor_log10_pow2(e2) - 1;

    if (e10 >= 0) {
        int sh = inv5_b[e10] - e2 + e10;
        for (int i = 0; i < 3; i++) {
            uint64_t f, lo;
            v[i] = mul_shift(x[i], inv5_m[e10], sh, &f, &lo);
            exact[i] = false;
            if (f == 0) { /* near an integer, from above */
                if (e10 > 23 || x[i] % pow5_64[e10])
                    return false;
                exact[i] = true;
            }
        }
    } else {
        int sh = -(pow5_b[-e10] + e2 - e10);
        for (int i = 0; i < 3; i++) {
            uint64_t f, lo;
            v[i] = mul_shift(x[i], pow5_m[-e10], sh, &f, &lo);
            if (-e10 <= 55) {
                exact[i] = f == 0 && lo == 0;
            } else {
                exact[i] = false;
                if (f == ((uint64_t)1 << (sh - 64)) - 1) /* near an integer, from below */
                    return false;
            }
        }
    }

    uint64_t vm = v[0], vr = v[1], vp = v[2];
    if (exact[2] && !even)
        vp--;
    unsigned last = 0;
    int removed = 0;
    bool vm_tz = even && exact[0]; /* vm is a candidate */
    if (!vm_tz && !exact[1]) {
        /* The common case: no exact value to track. */
        while (vp / 10 > vm / 10) {
            if (vp / 10 - vm / 10 == 1) {
                /* One candidate one scale up, vp / 10: it is the answer, shortened by
                 * its trailing zeros, the candidates at the coarser scales. */
                uint64_t c = vp / 10;
                removed++;
                while (c % 100000000 == 0)
                    c /= 100000000, removed += 8;
                if (c % 10000 == 0)
                    c /= 10000, removed += 4;
                if (c % 100 == 0)
                    c /= 100, removed += 2;
                if (c % 10 == 0)
                    c /= 10, removed++;
                *out = c;
                *exp10 = e10 + removed;
                return true;
            }
            last = (unsigned)(vr % 10);
            vr /= 10, vp /= 10, vm /= 10;
            removed++;
        }
        *out = vr + (vr == vm || last >= 5);
    } else {
        bool vr_tz = exact[1]; /* every digit removed from vr, but the last, was 0 */
        while (vp / 10 > vm / 10) {
            vm_tz &= vm % 10 == 0;
            vr_tz &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10, vp /= 10, vm /= 10;
            removed++;
        }
        if (vm_tz) {
            while (vm % 10 == 0) {
                vr_tz &= last == 0;
                last = (unsigned)(vr % 10);
                vr /= 10, vp /= 10, vm /= 10;
                removed++;
            }
        }
        if (vr_tz && last == 5 && vr % 2 == 0)
            last = 4; /* an exact tie: round half to even */
        *out = vr + ((vr == vm && !vm_tz) || last >= 5);
    }
    *exp10 = e10 + removed;
    return true;
}

/* ---- the common path --------------------------------------------------------------- */

static const uint64_t pow10_64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
    10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
    1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
    10000000000000000000u};

/* Decimal digits of c >= 1: floor(bits * log10 2) (1233 / 4096 is close enough for bits
 * <= 64) is the digit count, or one less, of every c of that bit length. */
static inline int decimal_len(uint64_t c)
{
    int t = (64 - __builtin_clzll(c)) * 1233 >> 12;
    return t + (c >= pow10_64[t]);
}

/* A decimal as the fast writer takes it: its digits c17, padded with zeros to 17 (in
 * [10^16, 10^17); the writer drops the zeros at the end), and decpt, the exponent of the
 * first digit plus one (the digits before the decimal point, in fixed notation). */
typedef struct {
    uint64_t c17;
    int decpt;
} decimal17;

/* x * m (below 2^192) over 2^64, rounded down. */
static inline u128 mul_192(uint64_t x, u128 m)
{
    return (u128)x * (uint64_t)(m >> 64) + (uint64_t)((u128)x * (uint64_t)m >> 64);
}

/*
 * The shortest digits of m2 * 2^e2 / 4 (m2 the significand, e2 its exponent less 2; m2
 * not a power of two above DBL_MIN) in *out; false when a product is in doubt (about
 * once in 2^62: never seen).  See "The common path" at the top of the file.
 */
static inline bool shortest_common(uint64_t m2, int e2, decimal17 *out)
{
    unsigned ke = fk_of_e2[e2 + 1076];
    int k = (int)(ke >> 2) + FK_MIN, delta = ke & 3;
    u128 m = fk_m[ke >> 2];
    /* y(x) = (x << delta) * m / 2^128 for x = 4 m2 - 2, 4 m2, 4 m2 + 2 (mm, mv, mp):
     * each as its integer part v and the top 64 bits of its fraction f. */
    uint64_t xr = m2 << (delta + 2), two = (uint64_t)2 << delta;
    u128 t_m = mul_192(xr - two, m), t_r = mul_192(xr, m), t_p = mul_192(xr + two, m);
    uint64_t vm = (uint64_t)(t_m >> 64), s = (uint64_t)(t_r >> 64), vp = (uint64_t)(t_p >> 64);
    uint64_t fm = (uint64_t)t_m, fr = (uint64_t)t_r, fp = (uint64_t)t_p;
    const uint64_t half = (uint64_t)1 << 63;
    bool ex_m, ex_p, up; /* y(mm), y(mp) integers; round y(mv) up (a tie: to even) */
    if (k <= 0 && k >= -54) {
        /* m exact: so are v and f.  y = x * 5^-k * 2^(e2 - k) is an integer iff 2^(k - e2)
         * divides x (2 m2 -+ 1 is odd), a half-integer iff 2^(k - e2 - 1) does, exactly. */
        ex_m = ex_p = e2 - k >= -1;
        up = fr > half;
        if (fr == half) /* y(mv) is s + 1/2, or a little above */
            up = __builtin_ctzll(m2) != k - e2 - 3 || (s & 1);
    } else if (k > 0) { /* m rounded up: each y over by less than 2^-70 */
        ex_m = fm == 0;
        ex_p = fp == 0;
        up = fr >= half;
        if (k > 27 && (ex_m || ex_p || fr == 0 || fr == half))
            return false;
    } else { /* m rounded down: each y under by less than 2^-70, and never an integer */
        ex_m = ex_p = false;
        up = fr >= half;
        if (fm == UINT64_MAX || fp == UINT64_MAX || fr == UINT64_MAX || fr == half - 1)
            return false;
    }
    /* The candidates at this scale: the integers in [lo, hi]. */
    bool even = (m2 & 1) == 0;
    uint64_t lo = vm + 1 - (ex_m & even), hi = vp - (ex_p & !even);
    uint64_t q = s / 10, s10 = q * 10;
    bool lo_in = lo <= s10, hi_in = s10 + 10 <= hi, up1 = lo_in != hi_in;
    /* up1: one candidate one scale up, q + hi_in (at this scale, 10 (q + hi_in): the
     * writer drops the zeros at its end); otherwise c0, s or s + 1, whichever is a
     * candidate, or the closer if both are.  (Both computed and one chosen, without a
     * branch: either is as likely.) */
    uint64_t c0 = s + ((s + 1 <= hi) & ((lo > s) | up));
    uint64_t x = c0 ^ ((c0 ^ (s10 + 10 * hi_in)) & -(uint64_t)up1);
    /* x has 16 or 17 digits (m2 - 9 <= x < 10 m2 + 10), but for subnormals */
    bool l17 = x >= 10000000000000000u; /* (a multiply, not a branch: either is as likely) */
    uint64_t c17 = x * (10 - 9 * (uint64_t)l17);
    int len = 16 + l17;
    if (x < 1000000000000000u) {
        len = decimal_len(x);
        c17 = x * pow10_64[17 - len];
    }
    out->c17 = c17;
    out->decpt = k + len;
    return true;
}

/* ---- formatting -------------------------------------------------------------------- */

/* Write digits (n of them, the first one at 10^exp10) as repr() does, at p.  The slow
 * reference's writer (put_decimal is the fast one). */
static char *put_digits(char *p, const char *digits, size_t n, int exp10)
{
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
        return p;
    }
    *p++ = digits[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, digits + 1, n - 1);
        p += n - 1;
    }
    *p++ = 'e';
    *p++ = exp10 < 0 ? '-' : '+';
    unsigned e = (unsigned)abs(exp10);
    if (e >= 100)
        *p++ = (char)('0' + e / 100);
    *p++ = (char)('0' + e / 10 % 10);
    *p++ = (char)('0' + e % 10);
    return p;
}

/* nan, inf and zero with their sign; NULL for the others, after the sign. */
static char *put_special(double d, char **p)
{
    if (isnan(d))
        return strcpy(*p, "nan") + 3;
    if (signbit(d))
        *(*p)++ = '-';
    if (isinf(d))
        return strcpy(*p, "inf") + 3;
    if (d == 0)
        return strcpy(*p, "0.0") + 3;
    return NULL;
}

/* The fast writers build the text in 64-bit words, the first character in the lowest
 * byte, and store them whole: a word's bytes past the end of the text are scratch, which
 * the terminating NUL or a later word overwrites. */
static inline void store64(char *p, uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(p, &w, sizeof w);
}

#define ZEROS 0x3030303030303030u /* "00000000" */

/* The 8 decimal digits of v < 10^8, leading zeros included, as the values 0..9 in the
 * bytes of a word, the first in the lowest.  All in registers: v / 10^4 and v % 10^4 in
 * two 32-bit lanes, each split by 100 into two 16-bit lanes (floor(a * 10486 / 2^20) is
 * a / 100 for a < 10^4), each of those by 10 into two bytes (floor(a * 103 / 2^10) is
 * a / 10 for a < 100); no lane's product reaches the next lane. */
static inline uint64_t digits8(uint32_t v)
{
    uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
    uint64_t q = (x * 10486 >> 20) & 0x0000007F0000007Fu;
    x = q | (x - q * 100) << 16;
    q = (x * 103 >> 10) & 0x000F000F000F000Fu;
    return q | (x - q * 10) << 8;
}

#ifdef NUMFMT_SSE2
/* The same with SSE2, both 8-digit numbers at once: in 64-bit lanes, each split by
 * 10^4 (a * 0xD1B71759 / 2^45 is a / 10^4 for a < 2^32) into 32-bit lanes, each of
 * those by 100 into 16-bit lanes (the high 16 bits of a * 5243, over 8, are a / 100 for
 * a < 10^4), each of those by 10 into bytes (of a * 6554: a / 10 for a < 100). */
static inline __m128i digits16(uint32_t hi, uint32_t lo)
{
    __m128i v = _mm_set_epi64x(lo, hi);
    __m128i q = _mm_srli_epi64(_mm_mul_epu32(v, _mm_set1_epi32((int)0xD1B71759)), 45);
    v = _mm_or_si128(q, _mm_slli_epi64(_mm_sub_epi32(v, _mm_mul_epu32(q, _mm_set1_epi32(10000))), 32));
    q = _mm_srli_epi16(_mm_mulhi_epu16(v, _mm_set1_epi16(5243)), 3);
    v = _mm_or_si128(q, _mm_slli_epi32(_mm_sub_epi16(v, _mm_mullo_epi16(q, _mm_set1_epi16(100))), 16));
    q = _mm_mulhi_epu16(v, _mm_set1_epi16(6554));
    v = _mm_or_si128(q, _mm_slli_epi16(_mm_sub_epi16(v, _mm_mullo_epi16(q, _mm_set1_epi16(10))), 8));
    return _mm_or_si128(v, _mm_set1_epi8('0'));
}
#endif

/*
 * Write the decimal d as repr() does, at p; returns the end.  Its 17 digits are hi (8),
 * lo (8) and last, of which the first n are significant: up to the last that is not 0
 * (the first is not).  The text takes at most 22 bytes from p, 26 with the scratch
 * after the exponent.  (The length is computed without branches: n is known late, and
 * whether it is past the point is as likely as not.)
 */
static inline __attribute__((always_inline)) char *put_decimal(char *p, decimal17 d)
{
    int decpt = d.decpt;
    uint64_t a = d.c17 / 1000000000u, b = d.c17 / 10;
    uint32_t hi = (uint32_t)a, lo = (uint32_t)(b - a * 100000000u);
    char last = (char)('0' + (d.c17 - b * 10));
#ifdef NUMFMT_SSE2
    __m128i s = digits16(hi, lo);
    unsigned nz = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(s, _mm_set1_epi8('0'))) & 0xFFFF;
    int n = 32 - __builtin_clz(nz | (unsigned)(last != '0') << 16);
#else
    uint64_t r0 = digits8(hi), r1 = digits8(lo), w0 = r0 | ZEROS, w1 = r1 | ZEROS;
    /* past the highest byte that is not 0: of r1 if any, else of r0 (never 0) */
    int n = last != '0' ? 17 : r1 ? 16 - (__builtin_clzll(r1) >> 3) : 8 - (__builtin_clzll(r0) >> 3);
#endif
    if (decpt <= 0 && decpt >= -3) {
        store64(p, 0x3030303030302E30u); /* "0.000000" */
        char *q = p + 2 - decpt;
#ifdef NUMFMT_SSE2
        _mm_storeu_si128((__m128i *)(void *)q, s);
#else
        store64(q, w0);
        store64(q + 8, w1);
#endif
        q[16] = last;
        return q + n;
    }
    /* Fixed notation with decpt digits before the point (the zeros past the n digits
     * among them, and one after it at least), or scientific: one digit before it.  The
     * 16 digits of hi and lo, with '.' before the one at dp (none for dp = 16), are the
     * first 16 bytes; the 16th digit (or '.') and last follow. */
    bool sci = decpt < -3 || decpt > 16;
    int dp = sci ? 1 : decpt;
#ifdef NUMFMT_SSE2
    __m128i below = _mm_load_si128((const __m128i *)(const void *)&ins_below[dp]);
    __m128i o = _mm_or_si128(_mm_and_si128(s, below), _mm_slli_si128(_mm_andnot_si128(below, s), 1));
    _mm_storeu_si128((__m128i *)(void *)p,
                     _mm_or_si128(o, _mm_load_si128((const __m128i *)(const void *)&ins_dot[dp])));
    char d15 = (char)(_mm_extract_epi16(s, 7) >> 8);
#else
    u128 s = w0 | (u128)w1 << 64, low = s & ins_below[dp];
    u128 o = low | (s ^ low) << 8 | ins_dot[dp];
    store64(p, (uint64_t)o);
    store64(p + 8, (uint64_t)(o >> 64));
    char d15 = (char)(w1 >> 56);
#endif
    p[16] = dp == 16 ? '.' : d15;
    p[17] = last;
    if (!sci) /* max(n, decpt + 1) + 1 */
        return p + decpt + 2 + ((n - decpt - 1) & -(int)(n > decpt));
    p += n + (n > 1);
    int x = decpt - 1;
    uint32_t ax = (uint32_t)(x < 0 ? -x : x);
    uint64_t w = 'e' | (uint64_t)(x < 0 ? '-' : '+') << 8;
    if (ax >= 100) {
        w |= (uint64_t)('0' + ax / 100) << 16;
        ax %= 100;
        w |= (uint64_t)('0' + ax / 10) << 24 | (uint64_t)('0' + ax % 10) << 32;
        store64(p, w);
        return p + 5;
    }
    w |= (uint64_t)('0' + ax / 10) << 16 | (uint64_t)('0' + ax % 10) << 24;
    store64(p, w);
    return p + 4;
}

/* How often tl_fmt_double fell back on the slow path, and the common path left a
 * number (not a power of two) to the general one; for the tests. */
static atomic_ulong slow_fallbacks, common_doubts;

unsigned long tl__fmt_double_fallbacks(void);
unsigned long tl__fmt_double_fallbacks(void)
{
    return atomic_load_explicit(&slow_fallbacks, memory_order_relaxed);
}

unsigned long tl__fmt_double_doubts(void);
unsigned long tl__fmt_double_doubts(void)
{
    return atomic_load_explicit(&common_doubts, memory_order_relaxed);
}

/* tl_fmt_double by the slow reference alone; for the tests. */
size_t tl__fmt_double_slow(double d, char *buf);
size_t tl__fmt_double_slow(double d, char *buf)
{
    char *p = buf, *end = put_special(d, &p);
    if (!end) {
        char digits[24];
        size_t n;
        int exp10 = shortest_digits_slow(fabs(d), digits, &n);
        end = put_digits(p, digits, n, exp10);
    }
    *end = '\0';
    return (size_t)(end - buf);
}

/* The rare cases of tl_fmt_double: powers of two, products in doubt, and (then) the
 * slow path. */
static __attribute__((noinline)) char *put_uncommon(char *p, uint64_t bits)
{
    uint64_t c;
    int e;
    if (shortest_general(bits, &c, &e)) {
        int n = decimal_len(c);
        return put_decimal(p, (decimal17){c * pow10_64[17 - n], e + n});
    }
    char digits[24];
    size_t n;
    atomic_fetch_add_explicit(&slow_fallbacks, 1, memory_order_relaxed);
    double d;
    memcpy(&d, &bits, sizeof d);
    e = shortest_digits_slow(d, digits, &n);
    return put_digits(p, digits, n, e);
}

/* tl_fmt_double by the general path alone (where the common path would leave a product
 * in doubt, about once in 2^62); for the tests. */
size_t tl__fmt_double_general(double d, char *buf);
size_t tl__fmt_double_general(double d, char *buf)
{
    char *p = buf, *end = put_special(d, &p);
    if (!end) {
        uint64_t bits;
        need_tables();
        memcpy(&bits, &d, sizeof bits);
        end = put_uncommon(p, bits & ~((uint64_t)1 << 63));
    }
    *end = '\0';
    return (size_t)(end - buf);
}

size_t tl_fmt_double(double d, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint64_t abs_bits = bits & ~((uint64_t)1 << 63);
    char *p = buf, *end;
    /* zero, inf and nan: abs_bits - 1 wraps for zero */
    if (abs_bits - 1 >= ((uint64_t)0x7FF << 52) - 1) {
        end = put_special(d, &p);
    } else {
        need_tables();
        *p = '-';
        p += bits >> 63;
        uint64_t frac = abs_bits & (((uint64_t)1 << 52) - 1);
        int bexp = (int)(abs_bits >> 52), normal = bexp != 0;
        decimal17 dec;
        if (frac == 0 && bexp > 1) { /* a power of two */
            end = put_uncommon(p, abs_bits);
        } else if (shortest_common(frac | (uint64_t)normal << 52, bexp + !normal - 1077, &dec)) {
            end = put_decimal(p, dec);
        } else {
            atomic_fetch_add_explicit(&common_doubts, 1, memory_order_relaxed);
            end = put_uncommon(p, abs_bits);
        }
    }
    *end = '\0';
    return (size_t)(end - buf);
}

/* The digits of v (1 <= v < 10^8) at p, without leading zeros: returns the end.
 * Writes 8 bytes. */
static inline char *put_head(char *p, uint32_t v)
{
    uint64_t r = digits8(v);
    int lz = __builtin_ctzll(r) >> 3; /* leading zero digits: the low zero bytes */
    store64(p, r >> (8 * lz) | ZEROS);
    return p + 8 - lz;
}

size_t tl_fmt_int(int64_t i, char *buf)
{
    /* Work on the unsigned magnitude so INT64_MIN is fine. */
    uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    char *p = buf;
    *p = '-';
    p += i < 0;
    if (u < 100000000u) {
        if (u == 0)
            *p++ = '0';
        else
            p = put_head(p, (uint32_t)u);
    } else {
        uint64_t h = u / 100000000u;
        uint32_t lo = (uint32_t)(u - h * 100000000u);
        if (h < 100000000u) {
            p = put_head(p, (uint32_t)h);
        } else {
            uint64_t top = h / 100000000u; /* at most 1844 */
            p = put_head(p, (uint32_t)top);
            store64(p, digits8((uint32_t)(h - top * 100000000u)) | ZEROS);
            p += 8;
        }
        store64(p, digits8(lo) | ZEROS);
        p += 8;
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/* ---- decimal to binary (Eisel-Lemire) ---------------------------------------------- */

/* A tie, or a value the 192-bit product leaves in doubt, with q < 0: w * 10^q is dyadic
 * (so possibly a tie) only when 5^-q divides w, and is then w / 5^-q (an integer, which
 * the conversion rounds correctly) times 2^q (exact: the result is at least 2^-27). */
static int decimal_dyadic(uint64_t w, int q, double *out)
{
    if (q >= 0 || q < -27 || w % pow5_64[-q] != 0)
        return 0;
    *out = ldexp((double)(w / pow5_64[-q]), q);
    return 1;
}

int tl_decimal_to_double(uint64_t w, int q, double *out)
{
    if (w == 0 || q < EL_Q_MIN) {
        /* w * 10^q < 2^64 * 10^-343 < 2^-1075, half the smallest subnormal */
        *out = 0.0;
        return 1;
    }
    if (q > EL_Q_MAX) {
        *out = INFINITY;
        return 1;
    }
    need_tables();
    int l = __builtin_clzll(w);
    uint64_t x = w << l;
    u128 t = el_m[q - EL_Q_MIN];
    /* The exact product X = x * 10^q / 2^(el_e - l) lies in [P, P + x), P = x * el_m
     * (192 bits, in [2^190, 2^192)), and equals P when el_m is exact (q in [0, 55]).
     * First its top 128 bits without el_m's low half: X / 2^64 lies in [H, H + 2^64). */
    u128 h = (u128)x * (uint64_t)(t >> 64);
    uint64_t p2 = (uint64_t)(h >> 64), p1 = (uint64_t)h, p0;
    /* The 53 bits of the significand are the top ones of p2; below them comes the
     * rounding bit (half), then the rest (below, the low rb bits of p2, then p1, p0). */
    int rb = 9 + (int)(p2 >> 63);
    uint64_t mask = ((uint64_t)1 << rb) - 1, below = p2 & mask;
    unsigned half = (unsigned)(p2 >> rb) & 1;
    int tie = 0;
    /* The rounding of X only changes at a midpoint (half set, the rest zero).  X lies
     * within 2^128 above H * 2^64, which can reach the next midpoint only when the bits
     * below the rounding bit are all ones, and equal a midpoint only when H is one. */
    if (half ? below == 0 && p1 == 0 : below == mask) {
        /* So take the whole product: X in [P, P + x). */
        u128 lo = (u128)x * (uint64_t)t;
        uint64_t c = (uint64_t)(lo >> 64);
        p0 = (uint64_t)lo;
        p1 += c;
        p2 += p1 < c;
        rb = 9 + (int)(p2 >> 63);
        mask = ((uint64_t)1 << rb) - 1, below = p2 & mask;
        half = (unsigned)(p2 >> rb) & 1;
        if (q >= 0 && q <= 55) {
            tie = half && below == 0 && p1 == 0 && p0 == 0; /* X = P */
        } else if (!half && below == mask && p1 == UINT64_MAX && p0 > (uint64_t)0 - x) {
            /* X > P (when P is a midpoint, X is above it and rounds up), but [P, P + x)
             * holds the next midpoint: in doubt, unless X is dyadic (a tie with q in
             * [-4, -1] comes here).  Otherwise about one random input in 2^74. */
            return decimal_dyadic(w, q, out);
        }
    }
    uint64_t m = p2 >> (rb + 1); /* in [2^52, 2^53) */
    /* w * 10^q = X * 2^(el_e - l) and X is m * 2^(rb + 129) before rounding. */
    int biased = rb + 129 + el_e[q - EL_Q_MIN] - l + 1075;
    if (biased <= 0)
        return 0; /* subnormal (or zero): the rounding position differs; strtod's case */
    m += half && (!tie || (m & 1));
    if (m >> 53) {
        m >>= 1;
        biased++;
    }
    if (biased >= 2047) {
        *out = INFINITY; /* at least 2^1024 rounded to 53 bits: beyond DBL_MAX's midpoint */
        return 1;
    }
    uint64_t bits = (uint64_t)biased << 52 | (m & (((uint64_t)1 << 52) - 1));
    memcpy(out, &bits, sizeof *out);
    return 1;
}
