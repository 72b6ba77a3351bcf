# aio.py -- asyncio coroutines: two tasks computing between awaits; their frames are the coroutines' (argv: SECONDS [GATE])
import asyncio
import sys
import time


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i  # HOT crunch
    return s


async def worker(until):
    while time.perf_counter() < until:
        crunch(20000)
        await asyncio.sleep(0)


async def main(secs):
    until = time.perf_counter() + secs
    await asyncio.gather(worker(until), worker(until))


def wait_gate(gate):
    """Starts once the profiler is attached, asyncio (and its _asyncio module) imported before:
    code mapped during a profile is walked by frame pointers until it is read, which is not
    what this fixture checks."""
    deadline = time.perf_counter() + 60
    while gate and time.perf_counter() < deadline:
        try:
            open(gate).close()
            return
        except OSError:
            time.sleep(0.01)


wait_gate(sys.argv[2] if len(sys.argv) > 2 else None)
asyncio.run(main(float(sys.argv[1])))
