// Split.java -- two hot methods with a known CPU split (measured by the thread's own CPU clock), and a wall-clock mix of work and Thread.sleep
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

public class Split {
    static volatile long sink;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    // small enough for C2 to inline into alpha; its long loop keeps a safepoint, so its own debug info
    static long mix(long s, long n) {
        for (long i = 0; i < n; i++) s += i * 31 ^ (s >>> 3); // HOT mix
        return s;
    }

    static long alpha(long untilNs) {
        long s = 0;
        while (System.nanoTime() < untilNs) {
            s = mix(s, 2000); // HOT alpha
        }
        return s;
    }

    static long beta(long untilNs) {
        long s = 0;
        while (System.nanoTime() < untilNs) {
            for (int i = 0; i < 2000; i++) s += i * 17 ^ (s >>> 5); // HOT beta
        }
        return s;
    }

    static void gate(String file) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        Path p = Paths.get(file);
        while (!Files.exists(p) && System.nanoTime() < deadline)
            Thread.sleep(10);
    }

    // 30 ms of alpha, 20 ms of beta, each timed by the thread's CPU clock; returns {alpha, beta} ns
    static long[] alternate(double cpuSecs) {
        long[] used = new long[2];
        long limit = (long) (cpuSecs * 1e9), deadline = System.nanoTime() + 3 * limit;
        while (used[0] + used[1] < limit && System.nanoTime() < deadline) {
            long t0 = MX.getCurrentThreadCpuTime();
            sink += alpha(System.nanoTime() + 30_000_000L);
            long t1 = MX.getCurrentThreadCpuTime();
            sink += beta(System.nanoTime() + 20_000_000L);
            long t2 = MX.getCurrentThreadCpuTime();
            used[0] += t1 - t0;
            used[1] += t2 - t1;
        }
        return used;
    }

    static void compute(long untilNs) {
        sink += beta(untilNs);
    }

    static void doze(long ms) throws InterruptedException {
        Thread.sleep(ms);
    }

    public static void main(String[] a) throws Exception {
        String mode = a[0];
        double secs = Double.parseDouble(a[1]);
        double warm = a.length > 3 ? Double.parseDouble(a[3]) : 0;
        if (mode.equals("split")) {
            alternate(warm);	// JIT warm-up before the profile starts
            gate(a[2]);
            long[] used = alternate(secs);
            System.out.println("alpha " + used[0] + " beta " + used[1]);
        } else {
            // wall: 40 ms of work, 60 ms asleep, each timed by the wall clock
            gate(a[2]);
            long work = 0, sleep = 0, end = System.nanoTime() + (long) (secs * 1e9);
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                compute(t0 + 40_000_000L);
                long t1 = System.nanoTime();
                doze(60);
                long t2 = System.nanoTime();
                work += t1 - t0;
                sleep += t2 - t1;
            }
            System.out.println("compute " + work + " doze " + sleep);
        }
    }
}
