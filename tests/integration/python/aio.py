# aio.py -- asyncio coroutines: two tasks computing between awaits; their frames are the coroutines'
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


asyncio.run(main(float(sys.argv[1])))
