#include "perf/perf_impl.h"
int pm_conv(pm_ctx *c) { (void)c; return PM_FAIL; }
