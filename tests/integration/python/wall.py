# wall.py -- half computing, a quarter in time.sleep, a quarter blocked in socket.recv; prints the wall split it measured
import socket
import sys
import time


def compute(until):
    s = 0
    while time.perf_counter() < until:
        s += 1  # HOT compute
    return s


def doze(secs):
    time.sleep(secs)


def receive(sock, secs):
    # nothing is ever sent: recv blocks until its timeout
    sock.settimeout(secs)
    try:
        sock.recv(1)
    except socket.timeout:
        pass


def main():
    secs = float(sys.argv[1])
    gate = sys.argv[2]
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline:
        try:
            open(gate).close()
            break
        except OSError:
            time.sleep(0.01)
    a, b = socket.socketpair()
    used = {"compute": 0.0, "doze": 0.0, "receive": 0.0}
    end = time.perf_counter() + secs
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        compute(t0 + 0.020)
        t1 = time.perf_counter()
        doze(0.010)
        t2 = time.perf_counter()
        receive(a, 0.010)
        t3 = time.perf_counter()
        used["compute"] += t1 - t0
        used["doze"] += t2 - t1
        used["receive"] += t3 - t2
    print("compute %.4f doze %.4f receive %.4f" % (used["compute"], used["doze"], used["receive"]))


main()
