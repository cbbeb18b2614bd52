"""pytest set-up for the tlcompare module's tests (make python-test).

The module is imported from $TLCOMPARE_PYTHONPATH (make sets it to build/python), else
from the installed package.  The conformance suite is $CONFORMANCE, else ../shared/conformance
beside the repository; its tests are skipped (with a line saying so) when it is absent.
"""
import os
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get("TLCOMPARE_PYTHONPATH"):
    sys.path.insert(0, os.environ["TLCOMPARE_PYTHONPATH"])
CONFORMANCE = os.path.abspath(os.environ.get("CONFORMANCE") or os.path.join(TOP, "..", "shared", "conformance"))
TLCOMPARE = os.environ.get("TLCOMPARE_BIN") or os.path.join(TOP, "build", "tlcompare")
TLREPORT = os.environ.get("TLREPORT_BIN") or os.path.join(TOP, "build", "tlreport")


@pytest.fixture(scope="session")
def conformance():
    if not os.path.isdir(os.path.join(CONFORMANCE, "report-cases")):
        pytest.skip(f"conformance suite not found at {CONFORMANCE}")
    return CONFORMANCE


@pytest.fixture(scope="session")
def tools():
    for t in (TLCOMPARE, TLREPORT):
        if not os.access(t, os.X_OK):
            pytest.skip(f"{t} not built (make)")
    return TLCOMPARE, TLREPORT
