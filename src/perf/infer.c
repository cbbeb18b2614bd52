#include "perf/perf_impl.h"
int pm_rope(pm_ctx *c) { (void)c; return PM_FAIL; }
int pm_store_cache(pm_ctx *c) { (void)c; return PM_FAIL; }
