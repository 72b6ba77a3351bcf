# hook.py -- a C extension call in the middle of a Python stack: json.loads (C scanner) calling back an object_hook
import json
import sys
import time

DOC = json.dumps([{"k%d" % i: i for i in range(20)} for _ in range(200)])


def object_hook(d):
    s = 0
    for i in range(200):
        s += i * i  # HOT hook
    return d


def run(secs):
    end = time.perf_counter() + secs
    while time.perf_counter() < end:
        json.loads(DOC, object_hook=object_hook)


run(float(sys.argv[1]))
