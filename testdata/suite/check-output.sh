#!/bin/sh
# Runs kvtool on each tests/NAME.in (with the options in NAME.args) and
# compares its standard output, standard error and exit status with
# NAME.out, NAME.err and NAME.status.
fail=0
for in in "$srcdir"/tests/*.in; do
	name=${in%.in}
	args=$(cat "$name.args" 2>/dev/null)
	./kvtool $args "$in" >out.tmp 2>err.tmp
	echo $? >status.tmp
	for what in out err status; do
		if ! cmp -s "$name.$what" $what.tmp; then
			echo "FAIL: $(basename "$name"): $what differs"
			diff "$name.$what" $what.tmp
			fail=1
		fi
	done
done
rm -f out.tmp err.tmp status.tmp
exit $fail
