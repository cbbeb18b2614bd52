/*
 * options.h - the option contract of a tool, as data.
 *
 * Each tool (tlcompare, tlreport) describes its options once, as a table of rows: the
 * command line's spellings, the Python keyword, the kind of value and its range, the help
 * text, and the field of the tool's argument struct the option sets.  Every front end
 * fills the same struct through the same table: the command lines from argv
 * (tl_opts_parse_argv, with argparse's rules), the Python module from keyword arguments
 * (tl_opts_find_key, then the tl_opts_set_* setters).  The tool's `..._args_check`
 * (run/compare_args.h, run/report_args.h) then applies every rule between options, and
 * --help is generated from the table (tl_opts_help), so the three cannot drift.
 *
 * Adding an option is one row in the tool's table (and a field for it to set), plus its
 * use; HACKING.md shows an example.
 */
#ifndef TL_RUN_OPTIONS_H
#define TL_RUN_OPTIONS_H

#include "base/util.h"

#include <stddef.h>

/* What an option's value is, and the type of the field it sets. */
typedef enum tl_opt_kind {
    TL_OPT_FLAG,    /* int, set to 1 */
    TL_OPT_TEXT,    /* const char *, not empty (points into argv / the caller's strings) */
    TL_OPT_NUMBER,  /* double, finite, within [lo, hi] */
    TL_OPT_LONG,    /* long, a whole number within [lo, hi] */
    TL_OPT_SIZE,    /* size_t, a whole number within [lo, hi] */
    TL_OPT_LIST,    /* tl_strlist: the values up to the next option (argparse's nargs='+') */
    TL_OPT_IGNORED, /* accepted and changes nothing: its spelling is added to the tl_strlist
                     * at `off` (help: why it changes nothing); takes a value when metavar */
    TL_OPT_HELP,    /* int set to 1, and parsing stops: the front end prints the help */
    TL_OPT_VERSION, /* the same, for the version */
    TL_OPT_HEADING, /* no option: `help` starts a section of --help */
} tl_opt_kind;

/* Where a row applies (tl_optdef.where). */
enum {
    TL_OPT_CLI = 1,    /* a command-line option (cli spellings) */
    TL_OPT_PY = 2,     /* a Python keyword argument (key) */
    TL_OPT_HIDDEN = 4, /* not listed in --help nor required in the manual (internal) */
    TL_OPT_NONES = 8,  /* a LIST whose Python items may be None (kept as NULL) */
    /* A tool with two kinds of run (tlreport: one trace, or a rank set) marks the rows of
     * one kind; its check refuses them in the other (tl_opts_given), never drops them. */
    TL_OPT_MODE_A = 16,
    TL_OPT_MODE_B = 32,
};

#define TL_OPT_MAX_SPELLINGS 4

/* One option of a tool. */
typedef struct tl_optdef {
    const char *cli[TL_OPT_MAX_SPELLINGS]; /* argparse spellings, the first long one canonical */
    const char *key;     /* the Python keyword (NULL: none) */
    tl_opt_kind kind;
    unsigned where;      /* TL_OPT_CLI | TL_OPT_PY | ... */
    const char *metavar; /* the value's name in --help ("FILE"), NULL for none */
    double lo, hi;       /* NUMBER / LONG / SIZE: the range, both ends included */
    const char *needs;   /* what the value must be, for the usage error: "--top needs <needs>" */
    const char *help;    /* one paragraph, wrapped by tl_opts_help */
    size_t off;          /* offsetof the field in the tool's argument struct */
} tl_optdef;

/* A list of strings (LIST values, IGNORED spellings, the positional arguments); `v` is
 * malloc'd, the strings are not owned.  given: the option appeared (even with no items). */
typedef struct tl_strlist {
    const char **v;
    size_t n, cap;
    int given;
} tl_strlist;

void tl_strlist_push(tl_strlist *l, const char *s);
void tl_strlist_free(tl_strlist *l);

/* A tool: its table and the words of its --help around the generated option list. */
typedef struct tl_tool {
    const char *prog;       /* "tlcompare" */
    const char *positional; /* the synopsis' positional part: "REPORT REPORT [REPORT ...]" */
    size_t positional_off;  /* offsetof the tl_strlist that collects them */
    const char *intro;      /* the paragraph before "options:" */
    const char *outro;      /* after the list: exit status, examples */
    const tl_optdef *opts;
    size_t nopts;
    size_t quiet_off;       /* offsetof the int that --quiet sets (tl_quiet follows it) */
    /* every rule between the options (the tool's `..._args_check`), after parsing */
    int (*check)(void *args, tl_error *err);
} tl_tool;

/*
 * Parse argv[1..argc) into `args` by the tool's table: exact spellings, unique prefixes of
 * long ones (argparse's rule, base/opts.h), "--opt=VALUE", "-oVALUE", "--" ending the
 * options.  Stops at a HELP or VERSION row (its field set).  Returns 0, or TL_RUN_USAGE
 * (run/compare.h) with the one-line message in *err (no program name).
 */
int tl_opts_parse_argv(const tl_tool *t, int argc, char **argv, void *args, tl_error *err);

/* tl_opts_cli's answer when --help or --version was asked: the text is to be printed. */
enum { TL_OPTS_SHOWN = -1 };

/*
 * A program's command line, as every command-line front end takes it: argv by the table
 * (tl_opts_parse_argv); a HELP or VERSION row stops there with its text in *out (the
 * help generated from the table, or "<name> <version>") and TL_OPTS_SHOWN.  Otherwise
 * tl_quiet follows the tool's quiet flag and the tool's check applies its rules.
 * Returns 0 to run, TL_OPTS_SHOWN, or the parse's or the check's status (TL_RUN_USAGE,
 * TL_RUN_FAILED) with the message in *err.  name: the program's name for the version
 * line (NULL: the tool's).
 */
int tl_opts_cli(const tl_tool *t, const char *name, const char *version, int argc, char **argv, void *args,
                tl_buf *out, tl_error *err);

/*
 * A command line's error as its program prints it: "<name>: <message>", a usage error's
 * followed by " (see '<tool> --help')", and a newline; appended to *out.
 */
void tl_opts_error_line(const tl_tool *t, const char *name, int status, const tl_error *err, tl_buf *out);

/*
 * tl_opts_cli for a program's main: the help or version text printed on stdout, an error
 * line (tl_opts_error_line) on stderr.  Returns 0 to run, with *done set when the help
 * or the version was shown (exit 0 then), else the exit status.
 */
int tl_opts_main(const tl_tool *t, const char *version, int argc, char **argv, void *args, int *done);

/* The row of Python keyword `key`, or NULL. */
const tl_optdef *tl_opts_find_key(const tl_tool *t, const char *key);

/*
 * The first row of t flagged `flag` (TL_OPT_MODE_*) that `args` gives: its field differs
 * from that in `defaults` (an argument struct as the tool's init leaves it); for an
 * IGNORED row, its spelling is in the list.  NULL when none is given.
 */
const tl_optdef *tl_opts_given(const tl_tool *t, const void *args, const void *defaults, unsigned flag);

/* The name of a row for messages: its canonical command-line spelling, else its key. */
const char *tl_opts_label(const tl_optdef *d);

/*
 * Set a row's field from a value, checking its kind and range (the same checks for every
 * front end).  Each returns 0, or TL_RUN_USAGE with "<label> needs <needs>" in *err.
 * set_text parses the text as the row's kind (the command line's way); the others take
 * the value already typed (the Python module's way).
 */
int tl_opts_set_text(const tl_optdef *d, void *args, const char *v, tl_error *err);
int tl_opts_set_flag(const tl_optdef *d, void *args, int on);
int tl_opts_set_number(const tl_optdef *d, void *args, double x, tl_error *err);
int tl_opts_set_whole(const tl_optdef *d, void *args, long long x, tl_error *err);
/* LIST: start the list (given, empty), then push its items (NULL only with TL_OPT_NONES). */
void tl_opts_list_begin(const tl_optdef *d, void *args);
void tl_opts_list_push(const tl_optdef *d, void *args, const char *item);

/* The tool's --help: usage synopsis, intro, the option list (from the table), outro. */
void tl_opts_help(const tl_tool *t, tl_buf *out);

/* Free what parsing allocated in `args` (every LIST and IGNORED list, the positionals). */
void tl_opts_free(const tl_tool *t, void *args);

#endif
