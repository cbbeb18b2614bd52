#!/usr/bin/env python3
"""Write the fuzzers' seed corpora: fuzz/corpus/<target>/<name>.

Small inputs made by hand for this project (not copies of any report): each shows the
fuzzer one feature of the format, so that mutations start from inputs that read.
Run from anywhere; the output is deterministic, so the files in git are exactly what
this script writes.  See fuzz/fuzz.h for what each target does with its input.
"""
import json, io
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- CSV ---------------------------------------------------------------------------

CSV = {
    "plain": "type,time ms,percent\nbusy,10.5,50\nidle,5,25\n",
    "quoted": 'name,note,Count\n"aten::mm","a, b",3\n"say ""hi""","two\nlines",4\n',
    "crlf": "name,Count\r\naten::add,1\r\naten::mul,2\r\n",
    "cr": "name,Count\raten::add,1\raten::mul,2\r",
    "bom": "\ufeffname,Count\naten::add,1\n",
    "missing": "name,a,b,c\nx,NA,,nan\ny,#N/A,NULL,None\nz,1\n",
    "types": "i,f,b,s\n1,1.5,True,x\n-2,1e-05,FALSE,1\n3,inf,true,\n",
    "dup_header": "a,,a,a.1,a\n1,2,3,4,5\n",
    "header_only": "name,Count,total_direct_kernel_time_ms\n",
    "blank_lines": "\n\nname,Count\n\naten::add,1\n\n",
    "quote_tail": 'name,Count\n"ab"cd,1\n',
    "big_ints": "n\n9223372036854775807\n-9223372036854775808\n99999999999999999999\n",
}

# ---- xlsx ----------------------------------------------------------------------------

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
P = "http://schemas.openxmlformats.org/package/2006/relationships"


def workbook_parts(sheets, shared=None, extra=None):
    """The parts of a workbook: sheets is a list of (name, sheetData XML)."""
    parts = [("_rels/.rels",
              f'<Relationships xmlns="{P}"><Relationship Id="rId1" Type="{R}/officeDocument" '
              'Target="xl/workbook.xml"/></Relationships>')]
    entries = "".join(f'<sheet name="{n}" sheetId="{i + 1}" r:id="rId{i + 1}"/>'
                      for i, (n, _) in enumerate(sheets))
    parts.append(("xl/workbook.xml",
                  f'<workbook xmlns="{NS}" xmlns:r="{R}"><sheets>{entries}</sheets></workbook>'))
    rels = "".join(f'<Relationship Id="rId{i + 1}" Type="{R}/worksheet" '
                   f'Target="worksheets/sheet{i + 1}.xml"/>' for i in range(len(sheets)))
    rels += (f'<Relationship Id="rId{len(sheets) + 1}" Type="{R}/sharedStrings" '
             'Target="sharedStrings.xml"/>')
    parts.append(("xl/_rels/workbook.xml.rels", f'<Relationships xmlns="{P}">{rels}</Relationships>'))
    for i, (_, data) in enumerate(sheets):
        parts.append((f"xl/worksheets/sheet{i + 1}.xml",
                      f'<worksheet xmlns="{NS}"><sheetData>{data}</sheetData></worksheet>'))
    if shared is not None:
        sis = "".join(shared)
        parts.append(("xl/sharedStrings.xml", f'<sst xmlns="{NS}">{sis}</sst>'))
    return parts + list(extra or [])


def inline(ref, text):
    r = f' r="{ref}"' if ref else ""
    return f'<c{r} t="inlineStr"><is><t>{text}</t></is></c>'


GPU = ('<row r="1">' + inline("A1", "type") + inline("B1", "time ms") + '</row>'
       '<row r="2">' + inline("A2", "busy") + '<c r="B2"><v>12.5</v></c></row>'
       '<row r="3">' + inline("A3", "idle") + '<c r="B3"><v>4</v></c></row>')

XLSX = {
    "inline": workbook_parts([("gpu_timeline", GPU)]),
    "shared": workbook_parts(
        [("ops_summary",
          '<row><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>'
          '<row><c t="s"><v>2</v></c><c><v>3</v></c></row>'
          '<row><c t="s"><v>3</v></c><c t="e"><v>#N/A</v></c></row>')],
        shared=['<si><t>name</t></si>', '<si><t>Count</t></si>',
                '<si><r><t>aten::</t></r><r><t>mm</t></r><rPh><t>x</t></rPh></si>',
                '<si><t>a_x000D_b</t></si>']),
    "kinds": workbook_parts(
        [("Sheet1",
          '<row>' + inline(None, "n") + inline(None, "b") + inline(None, "s") + inline(None, "e") + '</row>'
          '<row><c><v>1e3</v></c><c t="b"><v>1</v></c><c t="str"><v>f(x)</v></c>'
          '<c t="e"><v>#DIV/0!</v></c></row>'
          '<row><c r="D3" t="inlineStr"><is/></c><c r="AB3"><v>7</v></c></row>')]),
    "two_sheets": workbook_parts([("gpu_timeline", GPU), ("ops_summary", GPU)]),
    "empty_sheet": workbook_parts([("empty", "")]),
}


def part_list(parts):
    """The harness's text form: '--- name' lines, each followed by its content."""
    return "".join(f"--- {name}\n{data}\n" for name, data in parts).encode()


def zipped(parts, method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in parts:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return buf.getvalue()


# ---- the comparison ----------------------------------------------------------------

def compare_input(selector, *texts):
    return bytes([selector]) + b"\0".join(t.encode() for t in texts)


OPS_SUMMARY_B = ("name,total_direct_kernel_time_ms,Count,total_direct_kernel_time_sum,"
                 "Cumulative Percentage (%)\naten::mm,10.0,4,10.0,50\naten::add,2.5,8,2.5,62.5\n")
OPS_SUMMARY_V = ("name,total_direct_kernel_time_ms,Count,Cumulative Percentage (%)\n"
                 "aten::mm,8.0,4,40\naten::relu,1.0,2,45\n")
KERNEL = ("Kernel name,Kernel duration (µs)_sum,Kernel duration (µs)_mean,"
          "Kernel duration (µs)_count,Parent op category\nk1,100,50,2,GEMM\nk2,10,10,1,other\n")
KERNEL_LEGACY = ("name,Total Kernel Time (ms),Mean Kernel Time (µs),Count,Category\n"
                 "k1,0.1,50,2,GEMM\nk2,0.01,10,1,other\n")
OPS_ALL = ("name,Input type,Input Dims,Input Strides,Concrete Inputs,total_direct_kernel_time_sum,"
           "total_direct_kernel_time_mean,operation_count,kernel_names\n"
           'aten::mm,"(\'float\',)","((2, 3),)",,,10,5,2,gemm\n'
           "aten::add,,,,,1,1,1,add\naten::add,,,,,1,1,1,dup\n")
UNIFIED = ("name,Input type,Input Dims,Input Strides,Concrete Inputs,Kernel Time (µs)_sum,"
           "Kernel Time (µs)_mean,operation_count\nop,a,b,c,d,10,5,2\n")
GEMM = ("name,param: M,param: N,Kernel Time (µs)_sum,Kernel Time (µs)_mean,name_count,"
        "TFLOPS/s_mean,TB/s_mean,GFLOPS_first,UID\n"
        "aten::mm,128,256,40,20,2,1.5,0.2,3,7\naten::mm,64,64,4,4,1,0.5,0.1,1,8\n")
GEMM_V = ("name,param: M,param: K,Kernel Time (µs)_sum,Kernel Time (µs)_mean,name_count,"
          "TFLOPS/s_mean,TB/s_mean\naten::mm,128,1,30,15,2,2.0,0.3\n")
UNIFIED_PERF = ("name,op category,Input type,Input Dims,Input Strides,Concrete Inputs,Kernel Time (µs)_sum,"
                "Kernel Time (µs)_mean,operation_count,GFLOPS,Data Moved (MB),Compute Spec,has_perf_model\n"
                "aten::mm,GEMM,a,b,c,d,10,5,2,100,50,matrix_bf16,True\n"
                "aten::mm,GEMM,a,e,c,d,4,4,1,1e300,,,True\n"
                "aten::add,elementwise,a,b,c,d,0,0,3,0.1,8,vector_fp32,True\n"
                "aten::cat,other,a,b,c,d,7,7,1,,,,False\n")
NORM = ("name,param: op_shape,param: dtype,GFLOPS_first,Data Moved (MB)_first,TB/s_mean,TFLOPS/s_mean,"
        "Compute Spec,Kernel Time (µs)_mean,Kernel Time (µs)_sum,name_count,UID_first\n"
        'aten::layer_norm,"(1024, 768)",bf16,0.5,100,1.05,0.005,vector_bf16,100.0,1000,10,20\n'
        'aten::layer_norm,"(512, 768)",bf16,0.25,50,1.05,0.005,vector_bf16,25.0,50,2,21\n')
NORM_V = ("name,param: op_shape,param: is_affine,GFLOPS_first,Data Moved (MB)_first,TB/s_mean,TFLOPS/s_mean,"
          "Compute Spec,Kernel Time (µs)_mean,Kernel Time (µs)_sum,name_count,UID_first\n"
          'aten::layer_norm,"(1024, 768)",True,0.5,100,0.84,0.004,,125.0,1250,10,20\n')
GPU_B = "type,time ms,percent\nbusy,10,50\nidle,5,25\ntotal,15,100\n"
GPU_V = "type,time ms,percent\nbusy,12,60\nidle,3,15\nexposed_comm,1,5\n"

COMPARE = {
    "gpu_timeline": compare_input(0, GPU_B, GPU_V),
    "gpu_timeline_three": compare_input(0, GPU_B, GPU_V, GPU_B),
    "gpu_timeline_self": compare_input(0, GPU_B),
    "ops_summary": compare_input(1, OPS_SUMMARY_B, OPS_SUMMARY_V),
    "kernel_summary": compare_input(2, KERNEL, KERNEL),
    "kernel_summary_legacy": compare_input(2, KERNEL_LEGACY, KERNEL_LEGACY),
    "ops_all": compare_input(3, OPS_ALL, OPS_ALL.replace("10,5,2", "12,6,2")),
    "ops_unique_args_workbook": compare_input(0x80 | 4, OPS_ALL, OPS_ALL),
    "unified_perf_summary": compare_input(5, UNIFIED, UNIFIED),
    "gemm": compare_input(6, GEMM, GEMM_V),
    "unified_efficiency": compare_input(5, UNIFIED_PERF, UNIFIED_PERF.replace(",10,5,2,", ",8,4,2,")),
    "normalization": compare_input(13, NORM, NORM_V),
    "reduce_bwd_three": compare_input(14, NORM, NORM, "name\n"),
    "gemm_workbook": compare_input(0x80 | 6, GEMM, GEMM),
    "unary_empty": compare_input(11, GEMM, "name\n"),
    "missing_keys": compare_input(1, "name,Count\n,1\nNA,2\n", "name,Count\n,3\n"),
    "dup_keys": compare_input(0, "type,time ms\na,1\na,2\nb,3\n", "type,time ms\na,4\na,5\n"),
}


def ev(cat, name, ts, dur, pid=1, tid=1, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        e["args"] = args
    return e


def trace(*events):
    return json.dumps({"traceEvents": list(events)})


# fuzz_capture: execution_details.json, a capture trace, an execution trace (NUL-separated)
CAPTURE_TRACE = trace(
    ev("python_function", "runner.py(1): capture", 0, 200),
    ev("cuda_runtime", "hipStreamBeginCapture", 10, 2),
    ev("python_function", "nn.Module: Net_0", 15, 50),
    ev("cpu_op", "aten::mm", 16, 10, args={"Input Dims": [[32, 64], [64, 64]]}),
    ev("cuda_runtime", "hipLaunchKernel", 17, 2, args={"kernel": "kA", "correlation": 90}),
    ev("cpu_op", "sglang_profiler::attn_7", 30, 10, args={"Input Dims": [[32, 64]]}),
    ev("cuda_runtime", "hipMemsetAsync", 31, 2, args={"correlation": 91}),
    ev("cuda_runtime", "hipLaunchKernel", 45, 1, args={"kernel": "kC", "correlation": 92}),
    ev("user_annotation", "capture_32_FULL", 12, 60),
    ev("cuda_runtime", "hipStreamEndCapture", 80, 2))
EXEC_ANN = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk64sqsq32sqsk64)"
EXEC_TRACE = trace(
    ev("user_annotation", EXEC_ANN, 100, 100),
    ev("cpu_op", "execute_model", 101, 90),
    ev("cuda_runtime", "hipGraphLaunch", 110, 10, args={"correlation": 5}),
    ev("kernel", "kA", 130, 5, 2, 7, {"correlation": 5, "stream": 7}),
    ev("gpu_memset", "Memset (Device)", 140, 6, 2, 7, {"correlation": 5, "stream": 7}),
    ev("kernel", "kC", 150, 4, 2, 8, {"correlation": 5, "stream": 8}))
DETAILS = json.dumps([{"file": "c.json", "batch_size": 32, "mode": "FULL"},
                      {"file": "d.json", "batch_size": 64, "mode": "PIECEWISE"}])
CAPTURE = {
    "full": "\0".join([DETAILS, CAPTURE_TRACE, EXEC_TRACE]),
    "no_details": "\0".join(["", CAPTURE_TRACE, EXEC_TRACE]),
    "bad_details": "\0".join(['[{"file": 1, "batch_size": true}]', CAPTURE_TRACE, EXEC_TRACE]),
    "step_native": "\0".join([DETAILS, CAPTURE_TRACE, EXEC_TRACE.replace(EXEC_ANN, "step[DECODE bs=4]")]),
    "no_annotation": "\0".join([DETAILS, CAPTURE_TRACE, EXEC_TRACE.replace(EXEC_ANN, "other")]),
}

# ---- opening a file as a report: a selector byte (the name's ending: 0 .xlsx, 1 .csv,
# 2 .json, 3 .json.gz, 4 .txt, 5 none), then the file's bytes ---------------------------

OPEN = {
    "workbook": b"\0" + zipped(XLSX["inline"]),
    "sheet_csv": b"\1" + CSV["plain"].encode(),
    "bom_csv": b"\1" + CSV["bom"].encode(),
    "json_no_trace": b"\2" + b' {"schemaVersion": 1, "events": []}',
    "json_list": b"\2" + b"[1, 2]",
    "gzip": b"\3" + bytes([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]),
    "text": b"\4" + b"hello\n",
    "png": b"\5" + bytes([0x89]) + b"PNG\r\n\x1a\n" + bytes(8),
    "xls": b"\0" + bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) + bytes(8),
    "empty": b"\0",
    "binary": b"\5" + bytes(range(0, 32)),
    "zip_damaged": b"\0" + b"PK\x03\x04" + bytes(26),
}


# fuzz_trace: the perf models read shape arguments that the trace's author controls.  Each
# op is a cpu_op with one kernel linked to it (correlation and an ac2g flow), so that the
# sheets evaluate it; the shapes are hostile: negative and 2^63-sized dimensions, products
# that overflow 64 bits, lists of the wrong length, depth or type, unreadable concrete
# inputs.
def op_with_kernel(i, name, args, kernel="k"):
    t0 = 100 * i
    a = dict(args)
    return [ev("cpu_op", name, t0, 20, args=a),
            ev("cuda_runtime", "cudaLaunchKernel", t0 + 2, 2, args={"correlation": 1000 + i}),
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 1000 + i, "pid": 1, "tid": 1, "ts": t0 + 2},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 1000 + i, "pid": 0, "tid": 7, "ts": t0 + 30, "bp": "e"},
            ev("kernel", kernel, t0 + 30, 5, 0, 7, {"correlation": 1000 + i, "stream": 7})]


def shapes(dims, types=None, concrete=None):
    a = {"Input Dims": dims}
    a["Input type"] = types if types is not None else ["float"] * (len(dims) if isinstance(dims, list) else 1)
    if concrete is not None:
        a["Concrete Inputs"] = concrete
    return a


def perf_trace(ops):
    evs = []
    for i, (name, args) in enumerate(ops):
        evs += op_with_kernel(i, name, args)
    return json.dumps({"traceEvents": evs})


BIG = 9223372036854775807
CONV_CI = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]
SDPA_T = ["c10::BFloat16"] * 3

# The shape arguments of one op of each modelled name met in the conformance traces
# (bert, qwen, resnet, timesformer, sglang, vllm), as they were: the mutations start from
# ops that every model evaluates.
REAL_OPS = [
    ('aten::add', {"Concrete Inputs": ["", "", "1"], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"], "Input Strides": [[72192, 512, 1], [72192, 512, 1], []], "Input Dims": [[1, 141, 512], [1, 141, 512], []]}),
    ('aten::add_', {"Concrete Inputs": ["", "", "1"], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"], "Input Strides": [[72192, 512, 1], [72192, 512, 1], []], "Input Dims": [[1, 141, 512], [1, 141, 512], []]}),
    ('aten::layer_norm', {"Concrete Inputs": ["", "[512]", "", "", "9.9999999999999998e-13", "True"], "Input type": ["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"], "Input Strides": [[72192, 512, 1], [], [1], [1], [], []], "Input Dims": [[1, 141, 512], [], [512], [512], [], []]}),
    ('aten::native_layer_norm', {"Concrete Inputs": ["", "[512]", "", "", "9.9999999999999998e-13"], "Input type": ["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"], "Input Strides": [[72192, 512, 1], [], [1], [1], []], "Input Dims": [[1, 141, 512], [], [512], [512], []]}),
    ('aten::addmm', {"Concrete Inputs": ["", "", "", "1", "1"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"], "Input Strides": [[1], [512, 1], [1, 512], [], []], "Input Dims": [[512], [141, 512], [512, 512], [], []]}),
    ('aten::_scaled_dot_product_flash_attention', {"Concrete Inputs": ["", "", "", "0.", "False", "False", "0.125"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"], "Input Strides": [[72192, 64, 512, 1], [72192, 64, 512, 1], [72192, 64, 512, 1], [], [], [], []], "Input Dims": [[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]}),
    ('aten::copy_', {"Concrete Inputs": ["", "", "False"], "Input type": ["float", "long int", "Scalar"], "Input Strides": [[559, 559, 1], [559, 559, 1], []], "Input Dims": [[1, 1, 559], [1, 1, 559], []]}),
    ('aten::bmm', {"Concrete Inputs": ["", ""], "Input type": ["float", "float"], "Input Strides": [[32, 1, 1], [559, 559, 1]], "Input Dims": [[1, 32, 1], [1, 1, 559]]}),
    ('aten::mul', {"Concrete Inputs": ["", ""], "Input type": ["float", "double"], "Input Strides": [[35776, 64, 1], []], "Input Dims": [[1, 559, 64], []]}),
    ('aten::pow', {"Concrete Inputs": ["", "2"], "Input type": ["float", "Scalar"], "Input Strides": [[572416, 1024, 1], []], "Input Dims": [[16, 559, 1024], []]}),
    ('aten::mean', {"Concrete Inputs": ["", "[-1]", "True", ""], "Input type": ["float", "ScalarList", "Scalar", ""], "Input Strides": [[572416, 1024, 1], [], [], []], "Input Dims": [[16, 559, 1024], [], [], []]}),
    ('aten::rsqrt', {"Concrete Inputs": [""], "Input type": ["float"], "Input Strides": [[559, 1, 1]], "Input Dims": [[16, 559, 1]]}),
    ('aten::neg', {"Concrete Inputs": [""], "Input type": ["c10::BFloat16"], "Input Strides": [[572416, 64, 1024, 1]], "Input Dims": [[16, 16, 559, 32]]}),
    ('aten::mm', {"Concrete Inputs": ["", ""], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[1024, 1], [1, 1024]], "Input Dims": [[8944, 1024], [1024, 1024]]}),
    ('aten::silu', {"Concrete Inputs": [""], "Input type": ["c10::BFloat16"], "Input Strides": [[1574144, 2816, 1]], "Input Dims": [[16, 559, 2816]]}),
    ('aten::sum', {"Concrete Inputs": ["", "[0]", "True", ""], "Input type": ["c10::BFloat16", "ScalarList", "Scalar", ""], "Input Strides": [[1000, 1], [], [], []], "Input Dims": [[10, 1000], [], [], []]}),
    ('aten::div', {"Concrete Inputs": ["", "49"], "Input type": ["c10::BFloat16", "Scalar"], "Input Strides": [[512, 1, 0, 0], []], "Input Dims": [[10, 512, 7, 7], []]}),
    ('aten::convolution', {"Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"], "Input type": ["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"], "Input Strides": [[50176, 196, 14, 1], [2304, 9, 3, 1], [], [], [], [], [], [], []], "Input Dims": [[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], [], [], []]}),
    ('aten::batch_norm', {"Concrete Inputs": ["", "", "", "", "", "True", "0.10000000000000001", "1.0000000000000001e-05", "True"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"], "Input Strides": [[25088, 49, 7, 1], [1], [1], [1], [1], [], [], [], []], "Input Dims": [[10, 512, 7, 7], [512], [512], [512], [512], [], [], [], []]}),
    ('aten::native_batch_norm', {"Concrete Inputs": ["", "", "", "", "", "True", "0.10000000000000001", "1.0000000000000001e-05"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar"], "Input Strides": [[25088, 49, 7, 1], [1], [1], [1], [1], [], [], []], "Input Dims": [[10, 512, 7, 7], [512], [512], [512], [512], [], [], []]}),
    ('aten::clamp_min_', {"Concrete Inputs": ["", "0"], "Input type": ["c10::BFloat16", "Scalar"], "Input Strides": [[25088, 49, 7, 1], []], "Input Dims": [[10, 512, 7, 7], []]}),
    ('aten::threshold_backward', {"Concrete Inputs": ["", "", "0"], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"], "Input Strides": [[25088, 49, 7, 1], [25088, 49, 7, 1], []], "Input Dims": [[10, 512, 7, 7], [10, 512, 7, 7], []]}),
    ('aten::native_batch_norm_backward', {"Concrete Inputs": ["", "", "", "", "", "", "", "True", "1.0000000000000001e-05", "[True, True, True]"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "float", "Scalar", "Scalar", "ScalarList"], "Input Strides": [[25088, 49, 7, 1], [25088, 49, 7, 1], [1], [1], [1], [1], [1], [], [], []], "Input Dims": [[10, 512, 7, 7], [10, 512, 7, 7], [512], [512], [512], [512], [512], [], [], []]}),
    ('aten::convolution_backward', {"Concrete Inputs": ["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"], "Input Strides": [[25088, 49, 7, 1], [25088, 49, 7, 1], [4608, 9, 3, 1], [], [], [], [], [], [], [], []], "Input Dims": [[10, 512, 7, 7], [10, 512, 7, 7], [512, 512, 3, 3], [], [], [], [], [], [], [], []]}),
    ('aten::upsample_nearest1d', {"Concrete Inputs": ["", "[128]", ""], "Input type": ["c10::BFloat16", "ScalarList", ""], "Input Strides": [[6144, 1, 768], [], []], "Input Dims": [[1, 768, 8], [], []]}),
    ('aten::max', {"Concrete Inputs": [""], "Input type": ["int"], "Input Strides": [[1]], "Input Dims": [[32]]}),
    ('aten::cumsum', {"Concrete Inputs": ["", "0", ""], "Input type": ["int", "Scalar", ""], "Input Strides": [[1], [], []], "Input Dims": [[32], [], []]}),
    ('vllm::rocm_unquantized_gemm', {"Concrete Inputs": ["", "", ""], "Input type": ["c10::BFloat16", "c10::BFloat16", ""], "Input Strides": [[2880, 1], [2880, 1], []], "Input Dims": [[32, 2880], [201088, 2880], []]}),
]


TRACE_PERF = {
    "perf_families.json": perf_trace(REAL_OPS),
    "perf_negative.json": perf_trace([
        ("aten::mm", shapes([[-4, 8], [8, -2]])),
        ("aten::addmm", shapes([[-1], [4, -8], [-8, 2]], concrete=["", "", "", "-1", "1"])),
        ("aten::bmm", shapes([[2, -3, 4], [2, 4, 5]])),
        ("aten::convolution", shapes([[1, -2, 8, 8], [4, 2, -3, 3], [], [], [], [], [], [], []],
                                     concrete=["", "", "", "[-1, 1]", "[1, -1]", "[0, 0]", "False", "[0, 0]", "-1"])),
        ("aten::_scaled_dot_product_flash_attention", shapes([[1, -8, 128, 64]] * 3, SDPA_T)),
        ("aten::native_layer_norm", shapes([[2, -8], [], [-8], [8], []], concrete=["", "[-8]", "", "", "1e-05"])),
        ("aten::sum", shapes([[-4, 8]])),
        ("aten::add", shapes([[-4, 8], [4, 8]])),
    ]),
    "perf_huge.json": perf_trace([
        ("aten::mm", shapes([[BIG, 4], [4, BIG]])),
        ("aten::mm", shapes([[4294967296, 4294967296], [4294967296, 8]])),
        ("aten::addmm", shapes([[BIG], [BIG, 2], [2, BIG]])),
        ("aten::bmm", shapes([[65536, 65536, 65536], [65536, 65536, 65536]])),
        ("aten::convolution", shapes([[BIG, 2, 8, 8], [4, 2, 3, 3], [], [], [], [], [], [], []],
                                     concrete=["", "", "", "[9223372036854775807, 1]", "[1, 1]", "[1, 1]", "False",
                                               "[0, 0]", "1"])),
        ("aten::_scaled_dot_product_flash_attention", shapes([[BIG, 8, BIG, 64]] * 3, SDPA_T)),
        ("aten::native_layer_norm", shapes([[BIG, BIG], [], [BIG], [BIG], []])),
        ("aten::copy_", shapes([[9223372036854775808, 2], [1e308, 2]])),
        ("aten::sum", shapes([[18446744073709551616, 3]])),
        ("triton_red_fused_sum_mean_1", shapes([[BIG], [], []], ["c10::BFloat16", "Scalar", "Scalar"],
                                               ["", "", "9223372036854775807", "-8"])),
    ]),
    "perf_odd.json": perf_trace([
        ("aten::mm", shapes([[4, 8]])),
        ("aten::mm", shapes([[[4, [8]], [8, 2]], [8, 2]])),
        ("aten::mm", {"Input Dims": "[[4, 8], [8, 2]]", "Input type": "float"}),
        ("aten::addmm", shapes([[4.5, 8], [8, 2e3], [True, None]])),
        ("aten::bmm", shapes([[], []])),
        ("aten::convolution", shapes([[1, 2, 8, 8], [4, 2, 3, 3]], concrete=["", "", "", "[1, ", "(1, 1)", "inf",
                                                                              "None", "[nan]", "x"])),
        ("aten::_scaled_dot_product_flash_attention", shapes([[1, 8, 128]], ["c10::BFloat16"])),
        ("aten::native_layer_norm", shapes([[2, 8], [], [8]], concrete=["", "[8", "", "", "1e-05"])),
        ("aten::sum", {"Input Dims": {"a": 1}, "Input type": [1, 2]}),
        ("aten::add", shapes([[4, 8], [1, 8], [], []], ["float", "c10::Half", "Scalar", "long int"],
                             ["", "", "2", "True"])),
        ("aten::rms_norm", shapes([[4, 8], [], [8], []], concrete=["", "[8]", "", "None"])),
        ("aiter::rms_norm", shapes([[4, 8], [8], []])),
        ("aiter::mha_varlen_fwd", shapes([[16, 8, 64]] * 3 + [[3], [3]], ["c10::BFloat16"] * 5)),
        ("aiter::fmoe_g1u1", shapes([[16, 64], [8, 128, 64], [8, 64, 64], [16, 2], [16, 2]])),
        ("aten::upsample_nearest2d", shapes([[1, 3, 8, 8], []], concrete=["", "[16, 16]"])),
        ("aten::replication_pad2d", shapes([[1, 3, 8, 8], []], concrete=["", "[1, 1, -1, 99999999999]"])),
    ]),
    # one modelled op with a long (2,000-entry) dims list: the parser's and the models'
    # per-entry work, within what a mutation can still grow
    "perf_long_dims.json": perf_trace([
        ("aten::mm", shapes([[1] * 2000, [8, 2]])),
        ("aten::add", shapes([list(range(1, 1000)), [1] * 999])),
    ]),
}


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# fuzz_trace: traces as older Kineto writes them (TRACES.md §4.6, §8): launch flows of cat
# async_cpu_to_gpu (alone, and beside ac2g), times written as integers, one float among
# them, and times beyond 64 bits.
def flow(cat, ph, fid, pid, tid, ts):
    return {"ph": ph, "id": fid, "pid": pid, "tid": tid, "ts": ts, "cat": cat, "name": "async_gpu", "bp": "e"}


def x(cat, name, pid, tid, ts, dur, args=None):
    return ev(cat, name, ts, dur, pid, tid, args)


def old_launch(c, ts, kts, kdur, cats=("async_cpu_to_gpu",)):
    evs = [x("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, 3, {"correlation": c, "External id": c})]
    for cat in cats:
        evs += [flow(cat, "s", c, 1, 1, ts), flow(cat, "f", c, 1, 7, kts)]
    evs.append(x("kernel", "volta_sgemm_128x64_nn", 1, 7, kts, kdur, {"correlation": c, "stream": 7}))
    return evs


MM = {"Input Dims": [[16, 32], [32, 64]], "Input type": ["float", "float"]}
TRACE_REAL = {
    "old_flows.json": trace(x("cpu_op", "aten::mm", 1, 1, 0, 20, MM), *old_launch(1, 2, 30, 4),
                            flow("async_cpu_to_gpu", "f", 99, 1, 1, 5),
                            x("cuda_runtime", "cudaGraphLaunch", 1, 1, 10, 2, {"correlation": 2}),
                            x("kernel", "g", 1, 7, 40, 3, {"correlation": 2, "stream": 7})),
    "both_flows.json": trace(x("cpu_op", "aten::mm", 1, 1, 0, 20, MM),
                             *old_launch(1, 2, 30, 4, ("ac2g", "async_cpu_to_gpu")), *old_launch(2, 5, 40, 6)),
    "int_times.json": trace(x("cpu_op", "aten::mm", 1, 1, 0, 20, MM), *old_launch(1, 2, 30, 4),
                            x("cpu_op", "aten::mm", 1, 1, 50, 20, MM), *old_launch(2, 52, 80, 6)),
    "mixed_times.json": trace(x("cpu_op", "aten::mm", 1, 1, 0, 20.5, MM), *old_launch(1, 2, 30.0, 4),
                              x("cpu_op", "aten::mm", 1, 1, 50, 20, MM), *old_launch(2, 52, 80, 6.0)),
}
BIG_TIMES = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, '
             b'"ts": 12345678901234567890, "dur": 9999999999999999999}, {"ph": "X", "cat": "kernel", "name": "k", '
             b'"pid": 0, "tid": 7, "ts": 1, "dur": 1' + b"0" * 400 + b'}]}')


def main():
    for name, text in CSV.items():
        write("csv", name + ".csv", text)
    for name, parts in XLSX.items():
        write("xlsx", name + ".parts", part_list(parts))
    write("xlsx", "inline.xlsx", zipped(XLSX["inline"]))
    write("xlsx", "shared.xlsx", zipped(XLSX["shared"]))
    write("xlsx", "kinds_stored.xlsx", zipped(XLSX["kinds"], zipfile.ZIP_STORED))
    for name, data in COMPARE.items():
        write("compare", name, data)
    for name, data in CAPTURE.items():
        write("capture", name, data)
    for name, data in OPEN.items():
        write("open", name, data)
    for name, data in TRACE_PERF.items():
        write("trace", name, data)
    for name, data in TRACE_REAL.items():
        write("trace", name, data)
    write("trace", "big_times.json", BIG_TIMES)


if __name__ == "__main__":
    main()
