#!/bin/bash
# USAGE: RP_BIN=.output/bin bash tests/golden/replay.sh WORKDIR
#
# Replays each saved stream of this directory (fp, dwarf, offcpu) through every emitter into
# WORKDIR/STREAM/{main,options,folded} and prints "SHA256  STREAM/RUN/FILE" for each file
# published, sorted: tests/golden.bats compares the lines with SHA256SUMS.
#   main     unwind | aggregate | emit-collapsed | emit-json | emit-svg | emit-firefox
#            | emit-pprof | commit, as rustprofile.sh replay --svg --collapsed
#            --json-windows --firefox-profile json wires them
#   options  the same with emit-collapsed --annotate --samples and emit-firefox --format
#            jslb --max-timeline-samples 16 (fewer than a window holds), without emit-svg
#   folded   emit-svg --folded of each CPU collapsed file of options
# The emitters' files are digested as written: replaying a stream makes them byte for byte.
# A diagnostics file is digested without two fields: written_at_unix_nanos (when commit
# published it) and the directories in output_paths (WORKDIR); the rest of it, the
# emitters' statistics among them, counts.
#
# Only the module copies in .modules may name frames: a debug file the machine has for one
# of them (libc6-dbg puts libc's in /usr/lib/debug/.build-id) names more.  So the replay
# runs where /usr/lib/debug is an empty tmpfs, in a mount namespace of its own (and a user
# namespace for a normal user).  Where no namespace can be made, it replays as it is only
# when /usr/lib/debug holds no debug file of the saved modules; otherwise it exits 77.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${RP_BIN:?RP_BIN names the directory of the stages}
work=${1:?usage: replay.sh WORKDIR}

if [ -z "${GOLDEN_NS:-}" ]; then
	ns=(unshare -m)
	[ "$(id -u)" -eq 0 ] || ns=(unshare -rm)
	if "${ns[@]}" true 2>/dev/null; then
		exec env GOLDEN_NS=1 "${ns[@]}" sh -c \
			'mount -t tmpfs -o mode=755 golden /usr/lib/debug && exec bash "$0" "$@"' \
			"$0" "$@"
	fi
	for m in "$here"/.modules/.build-id/*/*; do
		d=/usr/lib/debug/.build-id/$(basename "$(dirname "$m")")/$(basename "$m").debug
		if [ -e "$d" ]; then
			echo "replay.sh: no mount namespace to hide $d" >&2
			exit 77
		fi
	done
fi

# pipeline STREAM DIR EMITTERS...: the saved stream through unwind, aggregate, the emitters
# given (each a quoted command line, the output directory appended), emit-pprof and commit.
pipeline() {
	local s=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	"$bin/unwind" --module-cache "$here/.modules" <"$here/$s.stream" | "$bin/aggregate" |
		emitters "$dir" "$@" | "$bin/emit-pprof" --output "$dir" |
		"$bin/commit" --output "$dir" >/dev/null
}

# emitters DIR EMITTER...: runs the first emitter given into DIR, the rest behind it.
emitters() {
	local dir=$1 first
	shift
	if [ $# -eq 0 ]; then
		cat
		return
	fi
	read -ra first <<<"$1"
	shift
	"$bin/${first[0]}" "${first[@]:1}" --output "$dir" | emitters "$dir" "$@"
}

for s in fp dwarf offcpu; do
	pipeline "$s" "$work/$s/main" emit-collapsed emit-json emit-svg "emit-firefox --format json"
	pipeline "$s" "$work/$s/options" "emit-collapsed --annotate --samples" \
		"emit-firefox --format jslb --max-timeline-samples 16"
	# A relative name: the SVG's subtitle shows it.
	mkdir -p "$work/$s/folded"
	for f in "$work/$s/options"/cpu-*.collapsed; do
		(cd "$work/$s/options" && "$bin/emit-svg" --folded "$(basename "$f")") \
			>"$work/$s/folded/$(basename "$f" .collapsed).svg"
	done
done

cd "$work"
for f in */*/*; do
	case $f in
	*/diagnostics-*.json)
		jq 'del(.written_at_unix_nanos) | .output_paths |= map_values(sub(".*/"; ""))' "$f" |
			sha256sum | sed "s|-\$|$f|" ;;
	*) sha256sum "$f" ;;
	esac
done | sort -k 2
