#!/bin/bash
# realbuild.sh builds and tests a large project of the corpus module
# (modernc.org/ccorpus2) woven, to measure weave's fallbacks on code nobody
# here wrote. Too slow for `make test`: run it by hand.
#
#   scripts/realbuild.sh gmp|postgres DIR [plain]
#
# DIR (outside the repository) gets the unpacked source and the logs. The
# compiler is weave-cc (a link to ./weave, built first, or to $WEAVE), or
# with "plain" $CC (default gcc). Prints: C files compiled, files that fell back (with the
# reasons, from the warnings; WEAVE_STRICT is left off so the build goes on),
# the time of configure+make and of the test suite, and the suite's result.
set -u
proj=$1 dir=$2 mode=${3:-woven}
repo=$(cd "$(dirname "$0")/.." && pwd)
assets=${ASSETS:-$(go env GOMODCACHE)/modernc.org/ccorpus2@v1.6.0/assets}
jobs=${JOBS:-2}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
bin=$dir/bin log=$dir/compiles.log
mkdir -p "$bin" && : >"$log"
cc=${CC:-gcc}
if [ "$mode" != plain ]; then
	if [ -n "${WEAVE:-}" ]; then # a weave binary built before
		cp "$WEAVE" "$bin/weave" || exit 1
	else
		(cd "$repo" && go build -o "$bin/weave" ./cmd/weave) || exit 1
	fi
	ln -sf weave "$bin/weave-cc"
	cc=$bin/weave-cc
fi
# A logging front: one line per compiler run (to count the C files
# compiled) and weave's warnings, which libtool hides for its second compile.
cat >"$bin/logcc" <<EOS
#!/bin/bash
printf '%q ' "\$PWD" :: "\$@" >>"$log"; echo >>"$log"
exec 3>&1
err=\$( { "$cc" "\$@" 2>&1 1>&3 3>&-; } )
rc=\$?
[ -n "\$err" ] && printf '%s\n' "\$err" >&2
printf '%s\n' "\$err" | grep 'weave: warning: .*not woven' >>"$dir/warnings.log"
exit \$rc
EOS
chmod +x "$bin/logcc"
export CC=$bin/logcc

case $proj in
gmp)
	tarball=$assets/gmplib.org/download/gmp/gmp-6.2.1.tar.gz src=$dir/gmp-6.2.1
	configure=(./configure) check=(make -j"$jobs" check);;
postgres)
	tarball=$assets/git.postgresql.org/git/postgresql.tar.gz src=$dir/postgresql
	configure=(./configure --without-readline --without-zlib --without-icu)
	check=(make check);;
*) echo "usage: $0 gmp|postgres DIR [plain]" >&2; exit 2;;
esac
rm -rf "$src" && tar xzf "$tarball" -C "$dir" || exit 1
cd "$src" || exit 1
t0=$(date +%s)
"${configure[@]}" CC="$CC" >"$dir/configure.log" 2>&1 || { echo "configure failed: $dir/configure.log"; exit 1; }
t1=$(date +%s)
: >"$log"; : >"$dir/warnings.log" # the build's compiles, not configure's probes
make -j"$jobs" >"$dir/make.log" 2>&1 || { echo "make failed: $dir/make.log"; exit 1; }
t2=$(date +%s)
mv "$log" "$dir/compiles-make.log"; mv "$dir/warnings.log" "$dir/warnings-make.log"
: >"$log"; : >"$dir/warnings.log"
# The suite runs woven programs by the hundred and compares what they
# print, stderr included (pg_regress diffs psql's): no summary on stderr,
# the profiles go to one directory.
export WEAVE_SUMMARY=0 WEAVE_OUT=$dir/profiles/%p.prof
rm -rf "$dir/profiles" && mkdir -p "$dir/profiles"
if [ "$(id -u)" = 0 ] && [ "$proj" = postgres ]; then
	# PostgreSQL's initdb refuses to run as root: the suite runs as
	# $CHECK_USER (default nobody), who gets the tree, the logs and a home
	# (weave's cache) of its own.
	user=${CHECK_USER:-nobody}
	mkdir -p "$dir/home"
	chown -R "$user" "$src" "$dir/home" "$dir/profiles" "$log" "$dir/warnings.log"
	setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \
		env HOME="$dir/home" XDG_CACHE_HOME="$dir/home/.cache" "${check[@]}" >"$dir/check.log" 2>&1
else
	"${check[@]}" >"$dir/check.log" 2>&1
fi
rc=$?
t3=$(date +%s)
mv "$log" "$dir/compiles-check.log"; mv "$dir/warnings.log" "$dir/warnings-check.log"
echo "$proj $mode: configure $((t1 - t0)) s, make $((t2 - t1)) s, check $((t3 - t2)) s (exit $rc), $(ls "$dir/profiles" | wc -l) profiles written"
for phase in make check; do
	n=$(grep -E -- ' -c( |$)' "$dir/compiles-$phase.log" | grep -cE '\.c( |$)')
	f=$(grep -c . "$dir/warnings-$phase.log")
	echo "$phase: $n C compiles, $f fell back"
done
grep -E '^# (TOTAL|PASS|FAIL|ERROR):' "$dir/check.log" | awk '{n[$2] += $3} END {for (k in n) printf "%s %d  ", k, n[k]; print ""}'
grep -E 'tests (passed|failed)' "$dir/check.log"
sort "$dir"/warnings-*.log | uniq -c | sort -rn | head -50
