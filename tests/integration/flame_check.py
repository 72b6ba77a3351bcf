#!/usr/bin/env python3
# flame_check.py -- helpers of test_flame.sh: read what Chromium rendered (DOM rows, PNG pixels), make a large pprof
"""
usage: flame_check.py rows DOM.html          -> one line per function row: name self% total% (or before% after% class)
       flame_check.py attr DOM.html ID NAME  -> the attribute NAME of the element with id ID
       flame_check.py png FILE.png           -> "width height distinct_colours stddev magenta_pixels"
       flame_check.py synth OUT.pb.gz SAMPLES STACKS
       flame_check.py interact URL FUNCTION  -> drives Chromium over the DevTools protocol: types FUNCTION
                                                into search, presses Enter, clicks its frame, presses Esc;
                                                prints what the page showed after each step, as JSON
"""
import base64
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
import gzip
import html.parser
import random
import struct
import sys
import zlib


class Rows(html.parser.HTMLParser):
    """the rows of the page's function table (#top) and element attributes by id"""

    def __init__(self):
        super().__init__()
        self.rows, self.by_id = [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.by_id[a["id"]] = a
        if tag == "tr" and "data-name" in a:
            self.rows.append(a)


def parse(path):
    p = Rows()
    p.feed(open(path, encoding="utf-8", errors="replace").read())
    return p


def rows(path):
    for r in parse(path).rows:
        if "data-self" in r:
            print(r["data-name"], r["data-self"].rstrip("%"), r["data-total"].rstrip("%"))
        else:
            print(r["data-name"], r["data-before"].rstrip("%"), r["data-after"].rstrip("%"), r.get("class", ""))


def attr(path, ident, name):
    print(parse(path).by_id.get(ident, {}).get(name, ""))


def png(path):
    """decodes an 8-bit RGB/RGBA PNG with zlib alone (Chromium writes these) and measures it"""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unexpected PNG format %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours, total, total2, count, magenta = set(), 0, 0, 0, 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
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
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if y % 2:
            continue  # every other row is plenty for the statistics
        for x in range(0, stride, bpp * 2):
            r, g, bl = line[x], line[x + 1], line[x + 2]
            colours.add((r, g, bl))
            v = (r + g + bl) / 3
            total += v
            total2 += v * v
            count += 1
            if abs(r - 0xe0) < 12 and abs(g - 0x40) < 12 and abs(bl - 0xfb) < 12:
                magenta += 1
    mean = total / count
    sd = max(0.0, total2 / count - mean * mean) ** 0.5
    print(w, h, len(colours), "%.1f" % sd, magenta)


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def vi(n, v):
    return varint(n << 3) + varint(v)


def ld(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def synth(out, n_samples, n_stacks):
    """a profile.proto written here (not by ebpfprof): n_stacks distinct stacks of a call tree of
    2000 functions, n_samples samples (the stacks in n_samples / n_stacks processes)"""
    rnd = random.Random(17)
    strings = ["", "samples", "count", "cpu", "nanoseconds", "/usr/bin/synth", "synth.c", "pid", "comm", "synth"]
    funcs = ["synth_fn_%04d" % i for i in range(2000)]
    first_fn = len(strings)
    strings += funcs
    first_pid = len(strings)
    procs = max(1, n_samples // n_stacks)
    strings += [str(1000 + p) for p in range(procs)]
    prof = bytearray()
    prof += ld(1, vi(1, 1) + vi(2, 2)) + ld(1, vi(1, 3) + vi(2, 4))
    prof += ld(3, vi(1, 1) + vi(2, 0x400000) + vi(3, 0x800000) + vi(5, 5) + vi(7, 1))
    for i in range(len(funcs)):
        prof += ld(5, vi(1, i + 1) + vi(2, first_fn + i) + vi(4, 6))
        prof += ld(4, vi(1, i + 1) + vi(2, 1) + vi(3, 0x400000 + 16 * i) + ld(4, vi(1, i + 1) + vi(2, i + 1)))
    # stacks grow from shared prefixes, like real call trees
    stacks, seen = [], set()
    while len(stacks) < n_stacks:
        if stacks and rnd.random() < 0.8:
            base = rnd.choice(stacks)
            cut = rnd.randint(1, len(base))
            s = base[:cut] + tuple(rnd.randrange(len(funcs)) for _ in range(rnd.randint(1, 6)))
        else:
            s = tuple(rnd.randrange(40) for _ in range(rnd.randint(3, 8)))
        s = s[:60]
        if s not in seen:
            seen.add(s)
            stacks.append(s)
    for i in range(n_samples):
        s = stacks[i % n_stacks]
        locs = b"".join(varint(f + 1) for f in reversed(s))  # leaf first
        n = rnd.randint(1, 9)
        labels = ld(3, vi(1, 7) + vi(2, first_pid + (i // n_stacks) % procs)) + ld(3, vi(1, 8) + vi(2, 9))
        prof += ld(2, ld(1, locs) + ld(2, varint(n) + varint(n * 10101010)) + labels)
    prof += b"".join(ld(6, s.encode()) for s in strings)
    prof += vi(9, 1700000000000000000) + vi(10, 10 * 10**9) + ld(11, vi(1, 3) + vi(2, 4)) + vi(12, 10101010)
    open(out, "wb").write(gzip.compress(bytes(prof), 6))


class Cdp:
    """the DevTools protocol over a WebSocket, written on the stdlib: text frames, masked, one at a time"""

    def __init__(self, ws_url):
        host, rest = ws_url[len("ws://"):].split("/", 1)
        h, p = host.split(":")
        self.sock = socket.create_connection((h, int(p)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (rest, host, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.next_id = 0

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("devtools closed the connection")
            buf += chunk
        return buf

    def _frame(self):
        b0, b1 = self._recv_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._recv_exact(8))[0]
        return b0 & 0x0F, self._recv_exact(n)

    def call(self, method, **params):
        self.next_id += 1
        data = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        head = bytes([0x81])
        n = len(data)
        head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 \
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data)))
        text = b""
        while True:
            op, payload = self._frame()
            text += payload
            if op == 0 and not text:
                continue
            msg = json.loads(text)
            text = b""
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def key(self, name, code, keycode):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=name, code=code, windowsVirtualKeyCode=keycode)

    def click(self, x, y):
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


STATE_JS = """(() => {
  const fg = document.getElementById('fg'), m = document.getElementById('matched');
  const frames = Array.from(fg.querySelectorAll('.f[data-n]')).map((e) => ({
    name: e.textContent, w: e.getBoundingClientRect().width, match: e.classList.contains('match')}));
  const tip = document.getElementById('tip');
  return {crumbs: document.getElementById('crumbs').textContent, matched: m.textContent,
          share: m.dataset.share || '', width: fg.clientWidth, frames: frames,
          tip: tip.style.display === 'block' ? tip.textContent : ''};
})()"""


def frame_rect_js(name):
    return """(() => { const e = Array.from(document.querySelectorAll('#fg .f[data-n]')).find((x) => x.textContent === %s);
      if (!e) return null; const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()""" % json.dumps(name)


def interact(url, function):
    tmp = tempfile.mkdtemp()
    proc = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--window-size=1200,800", "--user-data-dir=" + tmp, "--remote-debugging-port=0",
                             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(tmp, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port))
        cdp = Cdp([p for p in pages if p["type"] == "page"][0]["webSocketDebuggerUrl"])
        cdp.call("Page.enable")
        cdp.call("Page.navigate", url=url)
        for _ in range(300):
            if cdp.js("document.body && document.body.dataset.ready") == "1":
                break
            time.sleep(0.1)
        steps = {"loaded": cdp.js(STATE_JS)}
        cdp.call("Runtime.evaluate", expression="document.getElementById('search').focus()")
        cdp.call("Input.insertText", text=function)
        cdp.key("Enter", "Enter", 13)
        steps["searched"] = cdp.js(STATE_JS)
        xy = cdp.js(frame_rect_js(function))
        if xy:
            cdp.call("Input.dispatchMouseEvent", type="mouseMoved", x=xy[0], y=xy[1])
            steps["hovered"] = cdp.js(STATE_JS)
            cdp.click(*xy)
        steps["zoomed"] = cdp.js(STATE_JS)
        cdp.key("Escape", "Escape", 27)
        steps["reset"] = cdp.js(STATE_JS)
        print(json.dumps(steps))
    finally:
        proc.terminate()
        proc.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "rows":
        rows(sys.argv[2])
    elif cmd == "attr":
        attr(*sys.argv[2:5])
    elif cmd == "png":
        png(sys.argv[2])
    elif cmd == "interact":
        interact(sys.argv[2], sys.argv[3])
    elif cmd == "synth":
        synth(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
