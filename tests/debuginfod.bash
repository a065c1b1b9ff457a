# A real debuginfod server (Debian's elfutils debuginfod) for the tests that fetch debug
# files: started on a free port of this machine, asked for on 127.0.0.1 only, and stopped by
# the test file that started it.  Loaded after helper.bash.

# free_port: a TCP port nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# build_id FILE: the hex GNU build id of an ELF file
build_id() {
	readelf -n "$1" | awk '/Build ID/ { print $3 }'
}

# debuginfod_start DIR SRC: a debuginfod server in DIR indexing the ELF/DWARF files under SRC
# (a directory, which may be empty); its port in DIR/port, its pid in DIR/pid.  Returns once
# it answers (its scan of SRC done: it then knows every file there), or fails with its log.
debuginfod_start() {
	local dir=$1 src=$2 port i
	mkdir -p "$dir"
	port=$(free_port)
	echo "$port" >"$dir/port"
	(cd "$dir" && exec debuginfod -F -d "$dir/db.sqlite" -p "$port" "$src" \
		>"$dir/log" 2>&1 3>&-) &
	echo $! >"$dir/pid"
	for i in $(seq 150); do
		curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null | debuginfod_idle && return 0
		sleep 0.2
	done
	cat "$dir/log" >&2
	return 1
}

# debuginfod_idle < METRICS: one traversal of the sources is over and nothing is left to
# scan (debuginfod's /metrics)
debuginfod_idle() {
	awk '/^thread_work_total\{role="traverse"\} [1-9]/ { walked = 1 }
		/^thread_busy\{role="(traverse|scan)"\} [1-9]/ { busy = 1 }
		/^thread_work_pending\{role="scan"\} [1-9]/ { busy = 1 }
		END { exit !(walked && !busy) }'
}

# debuginfod_stop DIR: stops the server debuginfod_start started in DIR
debuginfod_stop() {
	[ -r "$1/pid" ] || return 0
	kill "$(cat "$1/pid")" 2>/dev/null || true
	wait "$(cat "$1/pid")" 2>/dev/null || true
}
