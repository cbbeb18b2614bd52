"""The option contract: --help, the man pages and the Python signatures against the tools'
option tables (src/run/compare_args.c, src/run/report_args.c), which tlcompare._core.options
hands out as they are compiled in."""
import inspect
import os
import re
import subprocess

import pytest

import tlcompare
from tlcompare import _core
from conftest import TOP

CLI, PY, HIDDEN = 1, 2, 4
FRONTS = {"tlcompare": tlcompare.compare, "tlreport": tlcompare.report}


def table(tool):
    return _core.options(tool)


def cli_spellings(tool):
    """Every spelling the command line lists (hidden rows and headings left out)."""
    out = set()
    for key, kind, spellings, where in table(tool):
        if where & CLI and not where & HIDDEN and kind != "heading":
            out.update(spellings)
    return out


def man_options(tool):
    """The spellings in the man page's OPTIONS section, as written there."""
    with open(os.path.join(TOP, "man", tool + ".1"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n.SH OPTIONS", 1)[1].split("\n.SH ", 1)[0]
    section = section.replace("\\-", "-")
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", section))


@pytest.mark.parametrize("tool", sorted(FRONTS))
def test_python_signature_is_the_table(tool):
    params = inspect.signature(FRONTS[tool]).parameters
    keywords = {n for n, p in params.items() if p.kind == inspect.Parameter.KEYWORD_ONLY}
    keys = {key for key, kind, spellings, where in table(tool) if where & PY}
    assert keywords == keys, (f"only in the signature: {sorted(keywords - keys)}; "
                              f"only in the table: {sorted(keys - keywords)}")


@pytest.mark.parametrize("tool", sorted(FRONTS))
def test_help_lists_the_table(tool, tools):
    binary = tools[0] if tool == "tlcompare" else tools[1]
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    listed = set()
    for line in out.split("\noptions:\n", 1)[1].splitlines():
        if line.startswith("  -"):
            head = re.split(r" {2,}", line.strip())[0]
            listed.update(w.rstrip(",") for w in head.split() if w.startswith("-"))
    assert listed == cli_spellings(tool)


@pytest.mark.parametrize("tool", sorted(FRONTS))
def test_man_page_lists_the_table(tool):
    spellings = cli_spellings(tool)
    in_man = man_options(tool)
    assert spellings - in_man == set(), "options missing from man/%s.1" % tool
    # an abbreviation shown as an example is a prefix of a spelling
    unknown = {m for m in in_man - spellings if not any(s.startswith(m) and m.startswith("--") for s in spellings)}
    assert unknown == set(), "man/%s.1 lists options the table does not have" % tool


def test_gpu_arch_with_inference_is_one_usage_error(tools, tmp_path):
    """Both tools refuse a GPU description with inference traces (the inference sheets
    have no roofline columns): exit 2 naming it, nothing written."""
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": []}')
    for args in ([tools[0], str(trace), str(trace), "--inference", "--gpu-arch", "H100"],
                 [tools[1], str(trace), "--inference", "--gpu-arch", "H100"]):
        r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert "not supported with inference traces" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["t.json"]
    with pytest.raises(tlcompare.UsageError, match="inference traces"):
        tlcompare.compare([str(trace), str(trace)], inference=True, gpu_arch="H100")
    with pytest.raises(tlcompare.UsageError, match="inference traces"):
        tlcompare.report(str(trace), inference=True, gpu_arch="H100")


@pytest.mark.parametrize("kw,message", [
    ({"top": 0}, "--top needs a whole number from 1 to 100000"),
    ({"confidence": 10}, "--confidence needs a level from 50 to below 100"),
    ({"min_delta_ms": -1}, "--min-delta-ms needs a number of at least 0"),
    ({"fail_on_regression": float("nan")}, "--fail-on-regression needs a number of at least 0"),
    ({"sheets": ["nope"]}, "unknown group 'nope'"),
])
def test_python_ranges_are_the_command_lines(kw, message, tmp_path, tools):
    """The same row checks a keyword and an argument: the same message."""
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": []}')
    with pytest.raises(tlcompare.UsageError, match=re.escape(message)):
        tlcompare.compare([str(trace), str(trace)], **kw)
    flag = {"fail_on_regression": "--fail-on-regression", "min_delta_ms": "--min-delta-ms"}.get(
        next(iter(kw)), "--" + next(iter(kw)))
    value = next(iter(kw.values()))
    value = value[0] if isinstance(value, list) else value
    r = subprocess.run([tools[0], str(trace), str(trace), flag, str(value)], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_unknown_keyword_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword"):
        _core.compare(["a", "b"], {"no_such_option": 1})


def test_gpu_arch_pair_usage(tools, tmp_path):
    """--gpu-arch BASELINE,VARIANT: exactly two names, neither empty; else a usage error naming it."""
    trace = os.path.join(TOP, "examples", "traces", "vit_h100.pt.trace.json.gz")
    for bad in ("H100,", ",H100", "H100,MI300X,B200"):
        r = subprocess.run([tools[0], trace, trace, "--gpu-arch", bad, "-o", str(tmp_path / "o.xlsx")],
                           capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 2 and "--gpu-arch" in r.stderr and bad in r.stderr, (bad, r.stderr)
        assert not (tmp_path / "o.xlsx").exists()
    with pytest.raises(tlcompare.UsageError, match="--gpu-arch"):
        tlcompare.compare([trace, trace], gpu_arch="H100,", quiet=True)
