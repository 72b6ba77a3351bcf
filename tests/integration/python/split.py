# split.py -- two hot functions by the wall clock (60/40 phases), each timed with time.thread_time(); prints the CPU split
import sys
import threading
import time


def alpha(until):
    s = 0
    while time.perf_counter() < until:
        for i in range(300):
            s += i * i  # HOT alpha
    return s


def beta(until):
    s = 0
    while time.perf_counter() < until:
        for i in range(300):
            s += i ^ 7  # HOT beta
    return s


def timed(fn, until, used):
    t0 = time.thread_time()
    fn(until)
    used[fn.__name__] += time.thread_time() - t0


def alternate(secs, used):
    """One thread: 30 ms of alpha, 20 ms of beta, until secs of CPU are used."""
    deadline = time.perf_counter() + 3 * secs
    while sum(used.values()) < secs and time.perf_counter() < deadline:
        now = time.perf_counter()
        timed(alpha, now + 0.030, used)
        timed(beta, time.perf_counter() + 0.020, used)


def loop(fn, secs, used):
    """A thread of its own per function."""
    deadline = time.perf_counter() + 3 * secs
    t0 = time.thread_time()
    while time.thread_time() - t0 < secs and time.perf_counter() < deadline:
        fn(time.perf_counter() + 0.010)
    used[fn.__name__] += time.thread_time() - t0


def main():
    mode, secs = sys.argv[1], float(sys.argv[2])
    used = {"alpha": 0.0, "beta": 0.0}
    # start when the profiler is attached: the test creates the gate file
    gate = sys.argv[3] if len(sys.argv) > 3 else None
    deadline = time.perf_counter() + 60
    while gate and time.perf_counter() < deadline:
        try:
            open(gate).close()
            break
        except OSError:
            time.sleep(0.01)
    if mode == "threads":
        # beta's thread runs 2/3 as long as alpha's: a 60/40 split again
        ts = [threading.Thread(target=loop, args=(alpha, secs, used)),
              threading.Thread(target=loop, args=(beta, secs * 2 / 3, used))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    else:
        alternate(secs, used)
    print("alpha %.4f beta %.4f" % (used["alpha"], used["beta"]))


main()
