"""The module against its environment: memory limits, fork, threads, bytes paths, and
the gate's arguments (the same rule as compare()'s).

The memory and fork cases run in a child interpreter (with a timeout: a deadlock fails
the test instead of hanging it)."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tlcompare

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = os.path.join(TOP, "examples", "traces")
H100 = os.path.join(TRACES, "vit_h100.pt.trace.json.gz")
MI300 = os.path.join(TRACES, "vit_mi300x.pt.trace.json.gz")
BASE = os.path.join(TOP, "examples", "baseline.xlsx")
GENTRACE = os.path.join(TOP, "build", "tools", "gentrace")


def child(code, cwd, timeout=180):
    """Run `code` in a fresh interpreter that imports the same module; (rc, stdout, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(tlcompare.__file__)),
                                                     env.get("PYTHONPATH", "")] if p)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def temporaries(d):
    return sorted(n for _, dirs, files in os.walk(d) for n in dirs + files if ".tmp-" in n)


@pytest.fixture(scope="module")
def big_pair(tmp_path_factory):
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built (make build/tools/gentrace)")
    d = tmp_path_factory.mktemp("big")
    for flavour, name in (("cuda", "a.json"), ("rocm", "b.json")):
        subprocess.run([GENTRACE, "--flavour", flavour, "--size", "60M", "--plain", "-o", str(d / name)], check=True)
    return d


@pytest.mark.skipif(bool(os.environ.get("TLCOMPARE_SANITIZED")),
                    reason="AddressSanitizer maps its shadow and quarantine as it goes: under an "
                           "address-space limit it aborts itself ('Failed to mmap') before the run can")
def test_out_of_memory_raises_and_the_interpreter_continues(big_pair, tmp_path):
    """RLIMIT_AS too small for the run: OutOfMemoryError (a tlcompare.Error and a
    MemoryError) naming an input, `finally` runs, no temporary is left, and the next call
    works once the limit is lifted.  Several limits, so that the failure lands in the run's
    thread and in its helpers, and in a helper whose own helper still works on its frame
    (the higher ones, where the run may also fit and end without an error)."""
    for extra_mb in (40, 90, 140, 160, 180, 200, 220, 240):
        work = tmp_path / f"run{extra_mb}"
        work.mkdir()
        rc, out, err = child(f"""
            import os, resource, tlcompare
            def vmsize():
                for l in open("/proc/self/status"):
                    if l.startswith("VmSize:"):
                        return int(l.split()[1]) * 1024
            resource.setrlimit(resource.RLIMIT_AS, (vmsize() + {extra_mb} * 2**20, resource.RLIM_INFINITY))
            a, b = {str(big_pair / 'a.json')!r}, {str(big_pair / 'b.json')!r}
            try:
                tlcompare.compare([a, b], tracediff_dir="td", summary_md="s.md", quiet=True)
                print("no error")
            except MemoryError as e:
                assert isinstance(e, tlcompare.Error) and isinstance(e, tlcompare.OutOfMemoryError), type(e)
                assert "out of memory" in str(e) and ("a.json" in str(e) or "b.json" in str(e)), str(e)
                print("raised")
            finally:
                print("finally")
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            print(len(tlcompare.report({H100!r}, quiet=True)))
        """, cwd=work)
        assert rc == 0, err
        lines = out.split()
        assert lines[0] == "raised" or (extra_mb > 140 and lines[:2] == ["no", "error"]), (extra_mb, out, err)
        raised = lines[0] == "raised"
        assert lines[1 if raised else 2:] == ["finally", "15"], out
        assert temporaries(work) == []
        assert sorted(os.listdir(work)) == ([] if raised else ["s.md", "td"])


@pytest.mark.skipif(bool(os.environ.get("TLCOMPARE_SANITIZED")),
                    reason="AddressSanitizer's allocator (GCC 12's) is not locked around fork: a "
                           "fork while the run's helpers allocate can leave its lock held, and the "
                           "child hangs in the interpreter's own first malloc")
def test_fork_during_a_run_the_child_runs(big_pair, tmp_path):
    """A fork while another thread runs a comparison (the run lock held): the child's
    first call runs instead of waiting forever."""
    rc, out, err = child(f"""
        import os, threading, time, tlcompare
        a, b = {str(big_pair / 'a.json')!r}, {str(big_pair / 'b.json')!r}
        t = threading.Thread(target=lambda: tlcompare.compare([a, b], quiet=True))
        t.start()
        time.sleep(0.3)
        pid = os.fork()
        if pid == 0:
            try:
                n = len(tlcompare.report({H100!r}, quiet=True))
                os._exit(0 if n == 15 else 3)
            except BaseException:
                os._exit(4)
        _, status = os.waitpid(pid, 0)
        t.join()
        print(os.waitstatus_to_exitcode(status))
    """, cwd=tmp_path, timeout=120)
    assert rc == 0, err
    assert out.split() == ["0"]


def test_quiet_is_per_call_across_threads(tmp_path):
    """Two threads, one quiet and one not, each comparing a workbook with itself (a
    warning each time): exactly the loud thread's warnings are printed."""
    rc, out, err = child(f"""
        import threading, tlcompare
        def go(quiet):
            for _ in range(6):
                tlcompare.compare([{BASE!r}, {BASE!r}], quiet=quiet)
        ts = [threading.Thread(target=go, args=(q,)) for q in (True, False)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    """, cwd=tmp_path)
    assert rc == 0, err
    assert err.count("are the same input") == 6, err


def test_bytes_paths(tmp_path):
    """bytes work wherever a path does, undecodable ones too; another type is a TypeError
    that says what a path may be."""
    odd = os.fsencode(str(tmp_path)) + b"/tr\xff.json.gz"
    shutil.copy(H100, odd)
    assert len(tlcompare.report(odd, quiet=True)) == 15
    cmp = tlcompare.compare([odd, os.fsencode(MI300)], names=["a", "b"], quiet=True,
                            summary_md=os.fsencode(str(tmp_path)) + b"/s\xfe.md")
    cmp.to_excel(os.fsencode(str(tmp_path)) + b"/out\xfd.xlsx", csvs_dir=os.fsencode(str(tmp_path / "csv")))
    names = sorted(os.listdir(os.fsencode(str(tmp_path))))
    assert names == [b"csv", b"out\xfd.xlsx", b"s\xfe.md", b"tr\xff.json.gz"]
    with pytest.raises(TypeError, match="a path"):
        tlcompare.report(3)
    with pytest.raises(TypeError, match="a path"):
        tlcompare.compare([H100, 3])


@pytest.fixture(scope="module")
def kept():
    return tlcompare.compare([H100, MI300], names=["h100", "mi300"], quiet=True)


@pytest.mark.parametrize("confidence", [float("nan"), -3.0, 1e300, 40.0, float("inf")])
def test_gate_refuses_what_compare_refuses(kept, confidence):
    with pytest.raises(tlcompare.UsageError, match="^--confidence needs ") as a:
        tlcompare.compare([H100, MI300], confidence=confidence, quiet=True)
    with pytest.raises(tlcompare.UsageError, match="^--confidence needs ") as b:
        kept.gate(5, confidence=confidence)
    assert str(a.value) == str(b.value)


def test_gate_arguments_named(kept):
    with pytest.raises(tlcompare.UsageError, match="^--fail-on-regression needs ") as a:
        tlcompare.compare([H100, MI300], fail_on_regression=float("nan"), quiet=True)
    with pytest.raises(tlcompare.UsageError, match="^--fail-on-regression needs ") as b:
        kept.gate(float("nan"))
    assert str(a.value) == str(b.value)
    with pytest.raises(tlcompare.UsageError, match="^--min-delta-ms needs ") as a:
        tlcompare.compare([H100, MI300], min_delta_ms=-1, quiet=True)
    with pytest.raises(tlcompare.UsageError, match="^--min-delta-ms needs ") as b:
        kept.gate(5, min_delta_ms=-1)
    assert str(a.value) == str(b.value)
    with pytest.raises(tlcompare.UsageError, match="^--top needs "):
        kept.gate(5, top=-1)
    assert kept.gate(5, confidence=95).failed in (True, False)
    assert kept.gate(5, confidence=0.95) == kept.gate(5, confidence=95)


@pytest.mark.parametrize("option", ["summary_md", "summary_json"])
def test_an_output_that_cannot_be_written_is_an_output_error(tmp_path, option):
    """An output the run cannot write (here a directory where a file goes) is an
    OutputError naming it, not an InputError, and nothing is written."""
    d = tmp_path / "taken"
    d.mkdir()
    with pytest.raises(tlcompare.OutputError, match="taken: is a directory") as e:
        tlcompare.compare([H100, MI300], quiet=True, **{option: str(d)})
    assert not isinstance(e.value, tlcompare.InputError)
    assert os.listdir(d) == [] and sorted(os.listdir(tmp_path)) == ["taken"]
