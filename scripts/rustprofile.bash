# bash completion for rustprofile: subcommands, their options, and file, directory and
# value arguments.  Installed by `make install` as
# PREFIX/share/bash-completion/completions/rustprofile.
# shellcheck shell=bash

# _rustprofile_reply COMPGEN-ARGS...: the completions compgen gives for the current word.
_rustprofile_reply() {
	mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
}

_rustprofile() {
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		record | launch | replay | import | check | serve) cmd=${COMP_WORDS[i]}; break ;;
		--) return 0 ;;
		esac
	done
	# After launch's --, the command line is the command's own.
	if [ "$cmd" = launch ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = -- ]; then
				_rustprofile_reply -c
				return 0
			fi
		done
	fi
	if [ -z "$cmd" ]; then
		_rustprofile_reply -W "record launch replay import check serve --help"
		return 0
	fi

	case $prev in
	--output | --symbol-dir | --source-dir | --directory | --module-cache | --debug-cache)
		_rustprofile_reply -d; return 0 ;;
	--input | --save-stream | --offcpu-btf | --kallsyms | --otlp-ca | --profile | \
	--bearer-token-file)
		_rustprofile_reply -f; return 0 ;;
	--pid)
		local pids=() d
		for d in /proc/[0-9]*; do pids+=("${d#/proc/}"); done
		_rustprofile_reply -W "${pids[*]}"
		return 0 ;;
	--profiles)
		_rustprofile_reply -W "cpu heap off-cpu physical-alloc physical-usage cpu,heap cpu,off-cpu cpu,heap,off-cpu physical-alloc,physical-usage"
		return 0 ;;
	--unwind) _rustprofile_reply -W "auto fp dwarf"; return 0 ;;
	--allocator) _rustprofile_reply -W "auto rust system"; return 0 ;;
	--offcpu-phase) _rustprofile_reply -W "blocked runqueue all"; return 0 ;;
	--firefox-profile) _rustprofile_reply -W "json jslb"; return 0 ;;
	--format) _rustprofile_reply -W "auto perf-data simpleperf"; return 0 ;;
	--otlp-compression) _rustprofile_reply -W "none gzip"; return 0 ;;
	--docker-container | --k8s-pod | --container | --duration | --window | --alloc-interval | \
	--offcpu-min-duration-us | --offcpu-ring-buffer | --offcpu-probability | --cpu-frequency | \
	--physical-memory-probability | \
	--keep-windows | --max-stacks | --max-pending-events | --event-reorder-window | \
	--max-threads | --cpuid | --debuginfod | --max-timeline-samples | --completion-budget | \
	--otlp-endpoint | --otlp-header | --otlp-timeout | --resource-attribute | --event | \
	--max-module-cache | --max-debug-cache | --listen | --cors-origin | --bearer-token)
		return 0 ;;
	esac

	local common="--duration --window --output --profiles --alloc-interval --allocator
		--offcpu-phase --offcpu-min-duration-us --offcpu-ring-buffer --offcpu-btf
		--offcpu-probability --physical-memory-probability --unwind --allow-partial --cpu-frequency --keep-windows
		--max-stacks --max-pending-events --event-reorder-window --max-threads --symbol-dir
		--debuginfod --debug-cache --max-debug-cache --svg --collapsed --json-windows --firefox-profile --max-timeline-samples
		--completion-budget --otlp-endpoint --otlp-header --otlp-timeout --otlp-compression
		--otlp-ca --resource-attribute --otlp-timeline --help"
	local cpus="--cpuid --require-hardware-pmu"
	local opts
	case $cmd in
	record) opts="--pid --docker-container --k8s-pod --container --host --save-stream
		--max-module-cache $cpus $common" ;;
	launch) opts="--save-stream --max-module-cache $cpus $common --" ;;
	replay) opts="--input --module-cache $common" ;;
	import) opts="--input --format --event --kallsyms $common" ;;
	check) opts="--pid --docker-container --k8s-pod --container --json --symbol-dir --debuginfod
		--help" ;;
	serve) opts="--profile --directory --listen --symbol-dir --source-dir --debuginfod
		--cors-origin --bearer-token-file --bearer-token --help" ;;
	esac
	_rustprofile_reply -W "$opts"
}
complete -F _rustprofile rustprofile rustprofile.sh
