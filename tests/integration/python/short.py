# short.py -- a process that lives a fraction of a second, all of it in one function
import time


def short_lived_work(secs):
    end = time.perf_counter() + secs
    s = 0
    while time.perf_counter() < end:
        s += 1  # HOT short
    return s


short_lived_work(0.4)
