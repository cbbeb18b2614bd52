#include "perf/perf_impl.h"
int pm_triton(pm_ctx *c) { (void)c; return PM_FAIL; }
