#!/usr/bin/env bash
# unwind_table.sh -- CFI table build time, rows, bytes per MB of code and memory for a very large library and libc
# usage: bash tests/bench/unwind_table.sh [FILE...]   (after make and make fixtures)
set -u
cd "$(dirname "$0")/../.."
bench=${BUILD:-build}/fixtures/unwind_table_bench
[ -x "$bench" ] || { echo "unwind_table.sh: $bench missing (make fixtures)" >&2; exit 1; }

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	big=$(ls /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/lib/llvm-15/lib/libLLVM-15.so.1 2>/dev/null | head -n 1)
	# else the biggest shared library installed
	[ -n "$big" ] || big=$(find /usr/lib /lib -name '*.so*' -type f -size +1M -printf '%s %p\n' 2>/dev/null |
		sort -rn | head -n 1 | cut -d' ' -f2-)
	files=($big /lib/x86_64-linux-gnu/libc.so.6)
fi

printf '%-28s %8s %9s %11s %11s %13s %11s %9s\n' file build_ms rows row_bytes text_MB \
	row_bytes/MB transient_MB rss_MB
for f in "${files[@]}"; do
	[ -f "$f" ] || continue
	# a process per file: its peak RSS is this file's alone
	line=$("$bench" "$f" 5) || { echo "$f: failed" >&2; continue; }
	printf '%s\n' "$line" | awk -v name="$(basename "$f")" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-28s %8s %9s %11s %11.1f %13s %11.1f %9.1f\n", name, v["ms"], v["rows"],
			v["row_bytes"], v["text_bytes"] / 1048576, v["bytes_per_mb_text"],
			v["transient_bytes"] / 1048576, v["peak_rss_kb"] / 1024 }'
done
