#!/usr/bin/env bash
# deps.sh installs what `make test` needs besides Go and gcc (Debian/Ubuntu,
# as root): the one list `make deps` and CI (.ci/run) both use. Only what is
# missing is installed.
set -euo pipefail
need=()
# a command, then the package that installs it
while read -r cmd pkg; do
	command -v "$cmd" >/dev/null || need+=("$pkg")
done <<'LIST'
valgrind valgrind
clang clang
llvm-cov llvm
clang-13 clang-13
make make
cmake cmake
meson meson
ninja ninja-build
scons scons
ccache ccache
sccache sccache
distcc distcc
distccd distcc
icecc icecc
iceccd icecc
icecc-scheduler icecc
icecc-create-env icecc
unshare util-linux
g++ g++
uftrace uftrace
strace strace
chromium chromium
nm binutils
setpriv util-linux
prlimit util-linux
script bsdutils
autoreconf autoconf
automake automake
csmith csmith
LIST
# valgrind: the memory oracle; strace: the order of the runtime's
# start-up calls (TestFDTableBeforeThreads); clang-13: an older clang, the x86-64 guard's
# %fs:0 variant (TestFramesGuardFS); uftrace: the timing tests compare call
# counts with its; chromium: the HTML report's tests run it headless;
# autoconf, automake: TestSuiteAutotools builds a project with them;
# meson, ninja: TestProjectZlibMeson; scons: TestSConsProbes;
# csmith: TestCsmith weaves its random programs; llvm-cov: clang's gcov
# (TestCoverageBuild).
# sccache, distcc, icecc, g++: woven builds through compiler caches, a
# distcc daemon and an icecream cluster on localhost (unshare gives its
# remote daemon an idle /proc/stat) and into a C++ program
# (cmd/weave/builds_test.go).
# The libraries of the benchmarks game programs (corpus tests), and
# csmith.h, which csmith's programs include (libcsmith-dev: csmith does
# not depend on it):
for pkg in libgmp-dev libpcre3-dev libpcre2-dev libapr1-dev libcsmith-dev; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
