#!/usr/bin/env bash
# test_fuzz_smoke.sh -- builds the libFuzzer targets, replays their regression inputs and fuzzes each for a few seconds
set -u
SUITE=fuzz
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
secs=${FUZZ_SMOKE_SECONDS:-5}
# the targets are built with ASan and UBSan whatever the pass (tests/fuzz/fuzz.mk): the sanitizer
# pass would run exactly what the plain pass ran
case "${BUILD:-}" in
*/san) skip all "the fuzz targets carry ASan and UBSan in every pass: the plain pass ran them"; exit 0 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# every tests/fuzz/fuzz_TARGET.c is a target (fuzz.mk's FUZZ_ALL) and a case: those TESTS picks
# (all by default) run; with none picked there is nothing to build either
targets=$(for f in tests/fuzz/fuzz_*.c; do t=$(basename "$f" .c); t=${t#fuzz_}; selected "$t" && echo "$t"; done)
[ -n "$targets" ] || selected build || exit 0

# another compiler, or clang without its runtime libraries: nothing to run here
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$tmp/probe.c"
if ! ${CLANG:-clang} -fsanitize=fuzzer,address,undefined "$tmp/probe.c" -o "$tmp/probe" \
		2>"$tmp/probe.err"; then
	skip build "clang cannot link libFuzzer with ASan/UBSan: $(head -1 "$tmp/probe.err")"
	exit 0
fi
# the targets carry ASan and UBSan already: SANITIZE=1 needs no second copy in build/san
if ! make -s -j"$(nproc)" fuzz-build SANITIZE= >"$tmp/build.log" 2>&1; then
	tail -20 "$tmp/build.log"
	fail build "make fuzz-build failed"
	exit 0
fi
pass build

[ -n "$targets" ] || exit 0
# shellcheck disable=SC2086
bash tests/fuzz/run.sh -r -s "$secs" -t "$SUITE" $targets
exit 0
