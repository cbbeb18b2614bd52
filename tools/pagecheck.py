#!/usr/bin/env python3
"""pagecheck.py - open a page in headless Chromium and say what went wrong, or take
screenshots of its sections.  Standard library only: Chromium is driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: no port, nothing listening).

    tools/pagecheck.py PAGE.html                 # problems, one a line; exit 1 when any
    tools/pagecheck.py PAGE.html --shots DIR     # DIR/<section>.png of each section given
                       [--sections summary,roofline,tree] [--width 1100] [--max-height PX]

As a module (tests/python/test_html.py): Browser, load(), problems(), png_stats().
"""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium, spoken to on fds 3 (its input) and 4 (its output)."""

    def __init__(self, width=1100, height=900, chromium=None):
        exe = chromium or find_chromium()
        if not exe:
            raise RuntimeError("chromium not found (make deps)")
        self.profile = tempfile.mkdtemp(prefix="pagecheck-")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():
            # through fresh copies: a pipe's own fd may already be 3 or 4 (and close on exec)
            r, w = os.dup(to_r), os.dup(from_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(os.environ.get("PAGECHECK_LOG", os.devnull), "w"))
        os.close(to_r)
        os.close(from_w)
        self.width, self.height = width, height
        self.buf = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_w, self.from_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_r], [], [], left)
            if ready:
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, session, timeout=30):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m["method"] == method and m.get("sessionId") == session:
                return m
        while True:
            m = self._read(deadline)
            if "method" in m:
                self.events.append(m)
                if m["method"] == method and m.get("sessionId") == session:
                    return m


class Page:
    """A page loaded in its own tab: what it asked for and said while loading."""

    def __init__(self, browser, url, timeout=30):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.sid = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            browser.send(domain + ".enable", session=self.sid)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": browser.width, "height": browser.height,
                                                            "deviceScaleFactor": 1, "mobile": False}, self.sid)
        start = len(browser.events)
        t0 = time.monotonic()
        browser.send("Page.navigate", {"url": url}, self.sid)
        browser.wait_event("Page.loadEventFired", self.sid, timeout)
        self.load_s = time.monotonic() - t0
        self.url = url
        self.first = start

    def evaluate(self, expr):
        r = self.b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, self.sid)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def events(self):
        self.evaluate("0")  # let the events of the load arrive
        return [e for e in self.b.events[self.first:] if e.get("sessionId") == self.sid]

    def problems(self):
        """Console errors, uncaught exceptions, dialogs, requests other than the page itself,
        and a script that did not finish (no data-ready)."""
        out = []
        for e in self.events():
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p["exceptionDetails"].get("exception", {}).get("description",
                                                                                          p["exceptionDetails"]))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], [a.get("value") for a in p.get("args", [])]))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent" and p["request"]["url"] != self.url:
                out.append("request: %s" % p["request"]["url"])
            elif m == "Page.javascriptDialogOpening":
                out.append("dialog: %s" % p.get("message"))
        if self.evaluate("document.documentElement.getAttribute('data-ready')") != "1":
            out.append("the page's script did not finish (no data-ready)")
        return out

    def screenshot(self, selector=None, max_height=None):
        """PNG bytes: the viewport, or the element `selector` (its top max_height pixels)."""
        params = {"format": "png", "captureBeyondViewport": True}
        if selector:
            box = self.evaluate("(function(){var r=document.querySelector(%s).getBoundingClientRect();"
                                "return [r.left+window.scrollX,r.top+window.scrollY,r.width,r.height];})()"
                                % json.dumps(selector))
            height = min(box[3], max_height) if max_height else box[3]
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2], "height": height, "scale": 1}
        return base64.b64decode(self.b.send("Page.captureScreenshot", params, self.sid)["data"])


def file_url(path):
    return "file://" + os.path.abspath(path)


def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "PNG of depth %d type %d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def png_stats(data, step=4):
    """(share of non-white pixels, distinct colours) over every step-th pixel."""
    w, h, bpp, rows = png_pixels(data)
    colours, inked, seen = set(), 0, 0
    for y in range(0, h, step):
        row = rows[y]
        for x in range(0, w, step):
            px = row[x * bpp:x * bpp + 3]
            colours.add(px)
            seen += 1
            inked += px != b"\xff\xff\xff"
    return inked / max(seen, 1), len(colours)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page")
    ap.add_argument("--shots", metavar="DIR")
    ap.add_argument("--sections", default="summary,time,moved,roofline,tree")
    ap.add_argument("--width", type=int, default=1100)
    ap.add_argument("--max-height", type=int, help="cut each section's picture to this many pixels")
    a = ap.parse_args(argv)
    with Browser(width=a.width) as b:
        page = Page(b, file_url(a.page))
        bad = page.problems()
        for p in bad:
            print("%s: %s" % (a.page, p))
        if a.shots:
            os.makedirs(a.shots, exist_ok=True)
            for s in a.sections.split(","):
                if page.evaluate("!!document.getElementById(%s)" % json.dumps(s)):
                    with open(os.path.join(a.shots, s + ".png"), "wb") as f:
                        f.write(page.screenshot("#" + s, a.max_height))
        print("%s: opened in %.3f s%s" % (a.page, page.load_s, ", no problem" if not bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
