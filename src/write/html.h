/*
 * html.h - the comparison as one self-contained HTML page: the summary, and the same
 * numbers drawn (inline SVG), each chart followed by its table as the text equivalent.
 *
 * The writer draws a page model, plain data that the summary layer fills in
 * (summary/page.c): it lays out and formats, but computes no number of its own, so the
 * page says what the text and JSON summaries say.  The page fetches nothing (no network,
 * no font, no image: everything is inline) and carries one small constant script, for
 * the tooltips, the call tree's zoom and the tables' filters; every name on the page is
 * escaped text, never markup, and none is ever put inside the script.  Without the
 * script the page is complete (the charts are drawn, the tables are there).
 *
 * Colours are the Okabe-Ito set (told apart with the common colour blindnesses) and
 * every coloured mark also differs in shape or pattern (slower hatched, faster solid,
 * within noise grey and outlined), so that a grey print keeps the meaning.
 */
#ifndef TL_WRITE_HTML_H
#define TL_WRITE_HTML_H

#include "base/util.h"

#include <stddef.h>

/* The parts of a side's GPU time, as gpu_timeline splits busy from idle. */
enum { TL_PAGE_COMPUTE, TL_PAGE_COMM, TL_PAGE_MEMCPY, TL_PAGE_IDLE, TL_PAGE_NPARTS };

/* "Where the time went": one stacked bar (a side; a step or a rank of it when the inputs
 * have them). */
typedef struct tl_page_bar {
    const char *label;
    double part_ms[TL_PAGE_NPARTS]; /* NaN when absent */
    double total_ms;                /* gpu_timeline's total_time, NaN when absent */
} tl_page_bar;

/* More stacked bars under their own heading: a trace's steps, or the ranks of runs.  At most
 * TL_PAGE_MAX_BARS are drawn (the first ones); the table under the chart lists them all. */
#define TL_PAGE_MAX_BARS 64

typedef struct tl_page_bar_set {
    const char *title;
    const tl_page_bar *bars;
    size_t n;
    const char *note; /* what the bars are (which steps the verdicts take), or NULL */
} tl_page_bar_set;

/* "What moved": one changed op (or kernel, or lowest common op). */
typedef struct tl_page_move {
    const char *name;
    double base_ms, var_ms, delta_ms;
    double pct;          /* NaN when the baseline has no time */
    double ci_lo, ci_hi; /* the interval of delta_ms, NaN when untested */
    const char *verdict; /* "slower", "faster", "within noise", or NULL (untested) */
    const char *detail;  /* calls, per call, kernels (or NULL) */
} tl_page_move;

typedef struct tl_page_moves {
    const char *title;
    tl_page_move *items; /* regressions first, then improvements */
    size_t n;
    const char *note;    /* what the verdicts rest on, or NULL */
} tl_page_moves;

/* A perf-model op on the roofline: each side's arithmetic intensity (FLOP per byte) and
 * achieved TFLOPS/s; NaN on a side without both figures. */
typedef struct tl_page_point {
    const char *name;
    const char *detail; /* what the op is on each side (or NULL) */
    double ai[2];
    double tflops[2];
} tl_page_point;

#define TL_PAGE_MAX_PEAKS 4

/* A GPU's peak lines. */
typedef struct tl_page_gpu {
    const char *name;      /* NULL: no lines */
    double mem_tbps;       /* its memory bandwidth (TB/s), NaN when unknown */
    size_t npeaks;         /* its compute peaks (TFLOPS/s), highest first */
    double peak_tflops[TL_PAGE_MAX_PEAKS];
    const char *peak_label[TL_PAGE_MAX_PEAKS];
} tl_page_gpu;

typedef struct tl_page_roofline {
    const char *title;
    const char *side[2];   /* the tags (side[1] NULL: one report, one point per op) */
    tl_page_point *points;
    size_t n;
    /* the peak lines: gpu[0] the baseline's (or both sides'), drawn solid; gpu[1] the
     * variant's when the sides ran on different GPUs (else no name), drawn dashed */
    tl_page_gpu gpu[2];
    const char *note;      /* about the lines (the sides' GPUs differ, one is drawn), or NULL */
} tl_page_roofline;

/* One node of the differenced call tree (an icicle), in pre-order. */
typedef struct tl_page_node {
    const char *name;
    unsigned depth;         /* 0: a root */
    double x_us;            /* where it starts, in baseline µs from the left */
    double base_us, var_us; /* the GPU time under it on each side (the width is base_us) */
    double pct;             /* the change in % of base_us, NaN when base_us is 0 */
    int noise;              /* 1: the change is within the noise (drawn grey) */
    int side;               /* 0 on both sides, 1 baseline only, 2 variant only */
    int lca;                /* 1: a lowest common op (the tree stops there) */
} tl_page_node;

typedef struct tl_page_tree {
    const char *side[2];
    tl_page_node *nodes;
    size_t n;
    double total_us;      /* the baseline's time under the roots drawn */
    size_t hidden;        /* nodes too narrow to draw (left out, counted here) */
    double noise_pct;     /* changes smaller than this (%) are drawn as noise */
} tl_page_tree;

/*
 * An extension point for sections made elsewhere (a rank set's rank x metric heatmap of
 * busy time, exposed communication and wait per collective, for both sides and their
 * difference): `write` appends the section's inner HTML (an <svg> and its table) to out;
 * it must escape every name with tl_html_text / tl_html_attr and add no script.  The
 * section is placed after the call tree, under `title`, with the anchor `id`.
 */
typedef struct tl_page_extra {
    const char *id, *title;
    void (*write)(void *ctx, tl_buf *out);
    void *ctx;
} tl_page_extra;

/*
 * A rank x metric heatmap of two runs: per rank (a row) and metric (a column) each side's
 * value and the difference, as the comparison's sheets hold them, drawn as three panels
 * (baseline, variant, difference).  A side's cells darken from the metric's smallest value
 * to its largest (one scale per metric, shared by both sides); the difference is
 * vermillion and hatched where the variant
 * has more, blue where it has less, grey where it is 0.  Every cell carries its number.
 */
typedef struct tl_page_heatmap {
    const char *title;
    const char *side[2];     /* the baseline's and the variant's tags */
    size_t nrows, ncols;
    const char *const *row;  /* [nrows]: "rank 3" */
    const char *const *col;  /* [ncols]: the metric and its unit */
    const int *dec;          /* [ncols]: the decimals its numbers are shown with */
    const double *v[2];      /* [nrows * ncols], row-major, per side; NaN when absent */
    const double *diff;      /* [nrows * ncols]: the variant's minus the baseline's */
} tl_page_heatmap;

/* The heatmap draws at most this many rows (the first; a page stays a few MB); its table
 * lists them all. */
#define TL_PAGE_HEAT_MAX_ROWS 512

/* The heatmap (an <svg>) and its table (id `table_id`, with a filter), appended to out: a
 * tl_page_extra's section body. */
void tl_html_heatmap(tl_buf *out, const tl_page_heatmap *h, const char *table_id);

/* One report's ops by their GPU time (tlreport): the largest, and what the rest add up to. */
typedef struct tl_page_top {
    const char *name;
    double ms, calls, pct; /* pct: of the report's kernel time, as its sheet says */
} tl_page_top;

typedef struct tl_page_tops {
    const char *title;
    tl_page_top *items; /* largest first */
    size_t n;
    size_t rest;        /* ops not listed */
    double rest_ms;
} tl_page_tops;

typedef struct tl_page {
    const char *tool;          /* "tlcompare" or "tlreport" */
    const char *title;         /* "h100 vs mi300" */
    const char *summary_text;  /* the summary as the terminal shows it (no colours) */
    const char *headline;      /* the answer in one line, or NULL */
    tl_page_bar *bars;
    size_t nbars;
    const tl_page_bar_set *bar_sets; /* per step, per rank: under the sides' bars */
    size_t nbar_sets;
    const tl_page_tops *tops;  /* one report: its ops by time (NULL: none) */
    tl_page_moves *moves;
    size_t nmoves;
    tl_page_roofline *roofs;
    size_t nroofs;
    const tl_page_tree *tree;  /* NULL: no call tree (not two traces) */
    const tl_page_extra *extras;
    size_t nextras;
} tl_page;

/* The page, appended to out. */
void tl_html_write(const tl_page *p, tl_buf *out);

/* Text as HTML text (& < > escaped; control characters but line breaks as "?"). */
void tl_html_text(tl_buf *out, const char *s);
/* Text as a double-quoted attribute's value (& < > " ' escaped). */
void tl_html_attr(tl_buf *out, const char *s);

#endif
