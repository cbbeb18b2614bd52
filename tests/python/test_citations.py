"""tools/check_citations.sh: which (contract, section) a comment in src/ cites, and that the
check fails unless docs/ has a heading carrying it (make check-citations runs it on the
repository itself)."""
import os
import subprocess

import pytest

from conftest import TOP

SCRIPT = os.path.join(TOP, "tools", "check_citations.sh")

DOCS = {
    "perf.md": "# Perf\n## §4 Families\n### §4.1 GEMM\n### §4.2 SDPA\n### §4.3 CONV\n## §5 Sheets (§5, text)\n",
    "inference.md": "# Inference\n### §2.7 Alignment\n### §2.10 Pseudo ops\n### §1.2 Inferred\n",
    "traces.md": "# Traces\n### §4.6 Integer times\n",
    "ranks.md": "# Ranks\n### §3.3 Names\n### §5.2 Sync\n",
    "comparing.md": "# Comparing\n## §1 In\n",
}

SRC = {
    # a list and a range on one line, then a wrapped comment's second line
    "perf/gemm.c": "/* PERF.md §4.1-§4.3, §5 */\nint x; /* TRACES.md §4.6: ints,\n * and §4.6 again */\n",
    # sections written alone take the first contract the file names
    "trace/infer.c": "/* infer.c (INFERENCE.md §2) */\n\n\n/* ---- alignment (§2.7) */\n/* pseudo ops (§2.10) */\n",
    # a folder whose files name no contract (the script's homes table: src/ranks/)
    "ranks/implicit.c": "/* nccl_implicit_sync (§5.2) */\n",
    # a file named in the homes table: its bare sections are MULTIRANK's
    "trace/collective.h": "/* TRACES.md §7 */\n\n\n/* the name inferred, §3.3 */\n",
    "compare/a.c": "/* SPEC §1 */\n",
}


def make_tree(tmp_path, src=SRC, docs=DOCS):
    for rel, text in src.items():
        p = tmp_path / "src" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    d = tmp_path / "docs"
    d.mkdir(exist_ok=True)
    for name, text in docs.items():
        (d / name).write_text(text, encoding="utf-8")
    return str(tmp_path / "src"), str(d)


# sh, grep and awk are no part of the library: run them without the sanitizer runtime the
# sanitizer build of these tests preloads
ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def check(src, docs, *flags):
    # the homes table names folders relative to the repository, as make runs it
    return subprocess.run(["sh", SCRIPT, *flags, "src", "docs"], cwd=os.path.dirname(src),
                          capture_output=True, text=True, env=ENV)


def listed(out):
    return {" ".join(line.split()[:2]) for line in out.splitlines() if " -> " in line}


def test_every_citation_is_attributed(tmp_path):
    src, d = make_tree(tmp_path)
    r = check(src, d, "-l")
    assert r.returncode == 1, r.stdout  # INFERENCE §2 and TRACES §7 have no heading
    assert listed(r.stdout) == {
        "PERF §4.1", "PERF §4.2", "PERF §4.3", "PERF §5", "TRACES §4.6", "INFERENCE §2",
        "INFERENCE §2.7", "INFERENCE §2.10", "MULTIRANK §5.2", "TRACES §7", "MULTIRANK §3.3",
        "SPEC §1"}
    missing = [line for line in r.stdout.splitlines() if "no heading" in line]
    assert len(missing) == 2
    assert any("INFERENCE §2 " in line and "src/trace/infer.c:1" in line for line in missing)
    assert any("TRACES §7 " in line for line in missing)


def test_passes_when_every_section_has_a_heading(tmp_path):
    docs = dict(DOCS)
    docs["inference.md"] += "## §2 Attribution\n"
    docs["traces.md"] += "## §7 coll_analysis\n"
    src, d = make_tree(tmp_path, docs=docs)
    r = check(src, d)
    assert r.returncode == 0, r.stdout
    assert "the 12 sections" in r.stdout


def test_a_deeper_or_longer_heading_is_not_the_section(tmp_path):
    docs = dict(DOCS)
    docs["inference.md"] = "## §2 Attribution\n### §2.1 Trees\n### §2.100 More\n### §2.7.1 Part\n### §1.2 x\n"
    docs["traces.md"] += "## §7 coll_analysis\n"
    src, d = make_tree(tmp_path, docs=docs)
    r = check(src, d)
    assert r.returncode == 1
    assert "no heading for INFERENCE §2.7 " in r.stdout
    assert "no heading for INFERENCE §2.10 " in r.stdout


def test_a_section_without_any_contract_is_refused(tmp_path):
    src, d = make_tree(tmp_path, src={"write/x.c": "/* see §4.2 */\n"})
    r = check(src, d)
    assert r.returncode == 1
    assert "src/write/x.c:1: §4.2 names no contract" in r.stdout


def test_no_citation_at_all_is_an_error(tmp_path):
    src, d = make_tree(tmp_path, src={"base/x.c": "int x;\n"})
    assert check(src, d).returncode == 2


def test_the_repository_cites_only_what_docs_tells():
    r = subprocess.run(["sh", SCRIPT], cwd=TOP, capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stdout
