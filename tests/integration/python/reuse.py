# reuse.py -- N functions made at run time, each freed before the next is made, so CPython gives the next one's code object the freed one's address; each runs 100 ms
# reuse.py N [same]: with "same", every function starts on line 1, as generated source does
import gc, sys, time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
same = len(sys.argv) > 2 and sys.argv[2] == "same"
# the profiler reads a new process's maps and builds its tables first: code that ran and
# was freed before then could not be read, and is not what this checks
time.sleep(0.5)
addrs = set()
for i in range(n):
    # f{i} starts on line i + 1 (the same address, another first line), or on line 1
    src = "\n" * (0 if same else i) + "def f%d():\n    t = 0\n    end = time.monotonic() + 0.1\n    while time.monotonic() < end:\n        t += 1\n    return t\n" % i
    ns = {"time": time}
    exec(compile(src, "gen.py", "exec"), ns)
    f = ns["f%d" % i]
    addrs.add(id(f.__code__))
    f()
    del f, ns
    gc.collect()	# the function and its globals hold each other: freed by the collector
print("%d functions, %d code object addresses" % (n, len(addrs)))
