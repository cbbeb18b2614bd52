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


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


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


if __name__ == "__main__":
    main()
