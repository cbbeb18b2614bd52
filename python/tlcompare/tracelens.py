"""Drop-ins for TraceLens' own Python entry points, so that a notebook switches with one line:

    from tlcompare.tracelens import generate_perf_report_pytorch, generate_compare_perf_reports_pytorch

They take TraceLens' arguments and return what TraceLens returns (a dict of DataFrames,
sheet name to frame), computed by tlcompare.  An argument whose feature tlcompare does not
have raises NotImplementedError naming it; one that changes nothing here (TraceLens ignores
it too, or it only turns on what is always made) is accepted.
"""
import json
import os
import tempfile

from . import Error, UsageError, compare, report

__all__ = ["generate_perf_report_pytorch", "generate_compare_perf_reports_pytorch", "compare_perf_reports_pytorch"]


def _refuse(given):
    """NotImplementedError naming the arguments given a value tlcompare cannot honour."""
    bad = [name for name, (value, default) in given.items() if value != default]
    if bad:
        raise NotImplementedError(
            f"tlcompare does not support {', '.join(bad)} (the TraceLens feature is not implemented); "
            "leave {} at {} or use TraceLens".format("it" if len(bad) == 1 else "them",
                                                      "its default" if len(bad) == 1 else "their defaults"))


def generate_perf_report_pytorch(profile_json_path, output_xlsx_path=None, output_csvs_dir=None,
                                 include_unlinked_kernels=False, enable_pseudo_ops=False,
                                 micro_idle_thresh_us=None, collective_analysis=True, include_overlap_info=False,
                                 include_first_occurrence_time=False, kernel_summary=False,
                                 short_kernel_study=False, short_kernel_threshold_us=10,
                                 short_kernel_histogram_bins=100, topk_short_kernels=None, topk_ops=None,
                                 topk_roofline_ops=None, comparison_json_path=None, extension_file=None,
                                 python_path=None, gpu_arch_json_path=None, gpu_arch_platform=None, gpu_arch=None,
                                 inductor_cache_dir=None, group_by_num_kernels=False, enable_origami=False,
                                 detect_recompute=False, include_call_stack=False):
    """TraceLens.Reporting.generate_perf_report_pytorch, by tlcompare.

    Returns {sheet name: DataFrame} as TraceLens does (kernel_summary only when asked), and
    writes the workbook and/or CSVs as it does: output_csvs_dir when given; the workbook at
    output_xlsx_path, or, when neither is given, beside the trace as <trace>_perf_report.xlsx.
    """
    _refuse({"micro_idle_thresh_us": (micro_idle_thresh_us, None),
             "include_overlap_info": (bool(include_overlap_info), False),
             "include_first_occurrence_time": (bool(include_first_occurrence_time), False),
             "short_kernel_study": (bool(short_kernel_study), False),
             "short_kernel_threshold_us": (short_kernel_threshold_us, 10),
             "short_kernel_histogram_bins": (short_kernel_histogram_bins, 100),
             "topk_short_kernels": (topk_short_kernels, None),
             "comparison_json_path": (comparison_json_path, None),
             "extension_file": (extension_file, None),
             "python_path": (python_path, None),
             "inductor_cache_dir": (inductor_cache_dir, None),
             "enable_origami": (bool(enable_origami), False),
             "detect_recompute": (bool(detect_recompute), False)})
    # collective_analysis: tlreport makes no coll_analysis sheet, and the traces it reads
    # have no collectives to analyse; topk_roofline_ops: TraceLens ignores it too.
    arch_given = [x for x in (gpu_arch_json_path, gpu_arch_platform, gpu_arch) if x is not None]
    if len(arch_given) > 1:
        raise UsageError("one GPU description at a time: gpu_arch_json_path, gpu_arch_platform or gpu_arch")
    path = os.fspath(profile_json_path)
    xlsx = output_xlsx_path
    if xlsx is None and output_csvs_dir is None:
        xlsx = path.rsplit(".json", 1)[0] + "_perf_report.xlsx"
    tmp = None
    try:
        arch = gpu_arch_json_path if gpu_arch_json_path is not None else gpu_arch_platform
        if gpu_arch is not None:
            fd, tmp = tempfile.mkstemp(suffix=".json", prefix="tlcompare_gpu_arch_")
            with os.fdopen(fd, "w") as f:
                json.dump(gpu_arch, f)
            arch = tmp
        sheets = report(path, gpu_arch=arch, include_unlinked_kernels=include_unlinked_kernels,
                        topk_ops=topk_ops, enable_pseudo_ops=enable_pseudo_ops,
                        group_by_num_kernels=group_by_num_kernels, include_call_stack=include_call_stack,
                        _drop=None if kernel_summary else ("kernel_summary",),
                        output_xlsx=xlsx, output_csvs_dir=output_csvs_dir, quiet=True)
    finally:
        if tmp:
            os.unlink(tmp)
    return sheets


def generate_compare_perf_reports_pytorch(reports, output="comparison.xlsx", names=None, sheets=("all",),
                                          output_csvs_dir=None):
    """TraceLens.Reporting.compare_perf_reports_pytorch.generate_compare_perf_reports_pytorch,
    by tlcompare: {result sheet: DataFrame}, the workbook written to `output` (unless None)
    and the CSVs to output_csvs_dir (when given)."""
    if isinstance(reports, (str, os.PathLike)):
        reports = [reports]
    cmp = compare(list(reports), names=names, sheets=list(sheets) if not isinstance(sheets, str) else [sheets],
                  quiet=True)
    if output is not None:
        cmp.to_excel(output, csvs_dir=output_csvs_dir)
    elif output_csvs_dir is not None:
        cmp.to_csvs(output_csvs_dir)
    return dict(cmp.sheets)


compare_perf_reports_pytorch = generate_compare_perf_reports_pytorch
