#!/usr/bin/env python3
"""Open an xlatperf report in headless Chromium (Debian's `chromium`) over the DevTools
protocol and print, as JSON, what a reader would see:

- `console`: every console message of level error or warning, every uncaught exception and
  every failed load (the page must need nothing from the network);
- `plots`: per <figure class="plot">: its id, its box on the page, and from a screenshot of that
  box alone the fraction of pixels that are not white and the number of distinct colours (a
  blank or unrendered plot has neither);
- `summary`: the summary table's rows (DUT, variant, frame size) with each cell's data-value;
- `injected`: whether a script set `window.xlatInjected` (the hostile-input test's payload);
  `scripts`: how many <script> elements the page has; `text`: the page's text as shown;
- `legends`: per plot legend entry, its text and where the browser drew it (`right` must not
  pass `svg_width`: the name is shown whole);
- with --screenshot FILE: a PNG of the whole page; with --plot-screenshot FILE: of the first plot.

Usage: check_report.py REPORT.html [--screenshot FILE] [--plot-screenshot FILE] [--width PX]
Needs websocket-client (pinned in scripts/setup.sh's virtual environment). Every wait has a
deadline; Chromium is started in a session of its own and its whole group is killed at the end.
"""

import base64
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import websocket

DEADLINE_S = 60


def png_pixels(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


class Browser:
    def __init__(self, width):
        self.profile = tempfile.TemporaryDirectory(prefix="xlat-chromium-")
        self.proc = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile.name}", f"--window-size={width},1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        url, end = None, time.time() + DEADLINE_S
        while url is None:
            if time.time() > end:
                raise RuntimeError("chromium did not print its DevTools address in time")
            line = self.proc.stderr.readline().decode(errors="replace")
            if not line and self.proc.poll() is not None:
                raise RuntimeError("chromium exited before it was ready")
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            url = m.group(1) if m else None
        self.ws = websocket.create_connection(url, timeout=DEADLINE_S, suppress_origin=True)
        self.next_id, self.events, self.session = 0, [], None

    def close(self):
        try:
            self.ws.close()
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=DEADLINE_S)
            self.profile.cleanup()

    def call(self, method, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        end = time.time() + DEADLINE_S
        while time.time() < end:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)
        raise RuntimeError(f"{method}: no answer within {DEADLINE_S} s")

    def wait_event(self, name):
        end = time.time() + DEADLINE_S
        for m in self.events:
            if m.get("method") == name:
                return m
        while time.time() < end:
            m = json.loads(self.ws.recv())
            self.events.append(m)
            if m.get("method") == name:
                return m
        raise RuntimeError(f"no {name} within {DEADLINE_S} s")


PAGE_FACTS = """JSON.stringify({
  title: document.title,
  height: document.documentElement.scrollHeight,
  width: document.documentElement.scrollWidth,
  plots: [...document.querySelectorAll('figure.plot')].map(f => {
    const r = f.querySelector('svg').getBoundingClientRect();
    return {id: f.id, x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height};
  }),
  summary: [...document.querySelectorAll('#summary-table tbody tr')].map(tr => ({
    dut: tr.dataset.dut, variant: tr.dataset.variant, frame_size: Number(tr.dataset.frameSize),
    cells: Object.fromEntries([...tr.querySelectorAll('td[data-metric]')].map(td =>
      [td.dataset.metric, {value: td.dataset.value, text: td.innerText.split('\\n')[0]}]))
  })),
  unread: [...document.querySelectorAll('#unread li')].map(li => li.innerText),
  injected: typeof window.xlatInjected !== 'undefined',
  scripts: document.querySelectorAll('script').length,
  text: document.body.innerText,
  legends: [...document.querySelectorAll('figure.plot svg text.legend')].map(t => {
    const b = t.getBBox(), vb = t.ownerSVGElement.viewBox.baseVal;
    return {plot: t.closest('figure').id, text: t.textContent, left: b.x, right: b.x + b.width,
            svg_width: vb.width, rendered: t.getComputedTextLength()};
  }),
})"""


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    page = os.path.abspath(args[0])
    shot = args[args.index("--screenshot") + 1] if "--screenshot" in args else None
    plot_shot = args[args.index("--plot-screenshot") + 1] if "--plot-screenshot" in args else None
    width = int(args[args.index("--width") + 1]) if "--width" in args else 1280
    b = Browser(width)
    try:
        target = b.call("Target.createTarget", url="about:blank")["targetId"]
        b.session = b.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(f"{domain}.enable")
        b.call("Page.navigate", url="file://" + page)
        b.wait_event("Page.loadEventFired")
        facts = json.loads(b.call("Runtime.evaluate", expression=PAGE_FACTS, returnByValue=True)["result"]["value"])
        for p in facts["plots"]:
            clip = {k: p[k] for k in ("x", "y", "width", "height")}
            clip["scale"] = 1
            png = base64.b64decode(b.call("Page.captureScreenshot", format="png", clip=clip,
                                          captureBeyondViewport=True)["data"])
            w, h, rows = png_pixels(png)
            px = [c for row in rows for c in row]
            p["nonwhite"] = sum(1 for c in px if min(c) < 230) / max(1, len(px))
            p["colours"] = len(set(px))
        if plot_shot and facts["plots"]:
            clip = {k: facts["plots"][0][k] for k in ("x", "y", "width", "height")}
            clip["scale"] = 1
            with open(plot_shot, "wb") as f:
                f.write(base64.b64decode(b.call("Page.captureScreenshot", format="png", clip=clip,
                                                captureBeyondViewport=True)["data"]))
        if shot:
            clip = {"x": 0, "y": 0, "width": facts["width"], "height": facts["height"], "scale": 1}
            png = base64.b64decode(b.call("Page.captureScreenshot", format="png", clip=clip,
                                          captureBeyondViewport=True)["data"])
            with open(shot, "wb") as f:
                f.write(png)
        console = []
        for m in b.events:
            meth, prm = m.get("method"), m.get("params", {})
            if meth == "Runtime.consoleAPICalled" and prm.get("type") in ("error", "warning", "assert"):
                console.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in prm.get("args", [])))
            elif meth == "Runtime.exceptionThrown":
                console.append("exception: " + prm["exceptionDetails"].get("text", ""))
            elif meth == "Log.entryAdded" and prm["entry"].get("level") in ("error", "warning"):
                console.append("log: " + prm["entry"].get("text", ""))
            elif meth == "Network.loadingFailed":
                console.append("load failed: " + prm.get("errorText", ""))
            elif meth == "Network.requestWillBeSent" and not prm["request"]["url"].startswith(("file:", "data:", "about:")):
                console.append("network request: " + prm["request"]["url"])
        facts["console"] = console
        print(json.dumps(facts))
    finally:
        b.close()


if __name__ == "__main__":
    main()
