#!/usr/bin/env bats
# emit-otlp: each window as OTLP Profiles over HTTP (manual, "OTLP Profiles export";
# docs/otlp.md).  A loopback receiver written for these tests (tests/tools/otlprecv.py)
# keeps every request and answers as each case asks; tests/tools/otlpdecode.c reads the
# requests with the project's generated code and checks the format's dictionary rules,
# `protoc --decode` reads them with the .proto files alone, and tests/tools/otlpcheck.py
# finds each window's pprof (read by `go tool pprof -raw`) in its request.  The windows
# come from the saved streams of tests/golden, replayed: no live profiling needed.

load helper

setup_file() {
	local root="$BATS_TEST_DIRNAME/.."
	export RP_BIN="${RP_BIN:-$root/.output/bin}"
	export OTLPDECODE="$BATS_FILE_TMPDIR/otlpdecode" GOLDEN="$root/tests/golden"
	export PROTO="$root/proto" TOOLS="$root/tests/tools"
	# CC/LDFLAGS come from make (check-asan links with the sanitizers).
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$RP_BIN/../gen" ${LDFLAGS:-} -o "$OTLPDECODE" \
		"$root/tests/tools/otlpdecode.c" "$RP_BIN/../gen/libotlppb.a" -lprotobuf-c
	export HOME="$BATS_FILE_TMPDIR/home" GOCACHE="$BATS_FILE_TMPDIR/gocache"
	mkdir -p "$HOME" "$GOCACHE"
	chmod a+rx "$BATS_FILE_TMPDIR" "$BATS_RUN_TMPDIR" "$(dirname "$BATS_FILE_TMPDIR")" \
		2>/dev/null || true
}

setup() {
	unset "${!OTEL_@}"
	OUT=$BATS_TEST_TMPDIR/out
	mkdir -p "$OUT"
	chmod a+rwx "$BATS_TEST_TMPDIR" "$OUT"
	RECV_PID=
}

teardown() {
	[ -z "$RECV_PID" ] || kill "$RECV_PID" 2>/dev/null || true
	[ -z "$RECV_PID" ] || wait "$RECV_PID" 2>/dev/null || true
}

# receiver [otlprecv.py options]: starts a receiver into $RECV; sets PORT and RECV_PID.
receiver() {
	RECV=$BATS_TEST_TMPDIR/recv
	mkdir -p "$RECV"
	python3 "$TOOLS/otlprecv.py" "$RECV" "$@" &
	RECV_PID=$!
	for _ in $(seq 100); do [ -s "$RECV/port" ] && break; sleep 0.05; done
	PORT=$(cat "$RECV/port")
}

# replay STREAM [driver options]: the saved stream through the driver into $OUT.
replay() {
	local s=$1
	shift
	"$RP" replay --input "$GOLDEN/$s.stream" --output "$OUT" "$@"
}

# otlp_of N: diagnostics.otlp of window N, compact JSON.
otlp_of() {
	jq -c .otlp "$OUT"/diagnostics-*-"$(printf %06d "$1")"-*.json
}

decode() {
	"$OTLPDECODE" <"$RECV/req-$1.pb"
}

protoc_decode() {
	protoc -I"$PROTO" \
		--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		"$PROTO/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
}

# same_as_pprof REQ FILE [--timeline]: the request holds the pprof FILE's values and stacks.
same_as_pprof() {
	decode "$1" >"$BATS_TEST_TMPDIR/dec.$1"
	pprof -raw "$2" >"$BATS_TEST_TMPDIR/raw.$1"
	python3 "$TOOLS/otlpcheck.py" "$BATS_TEST_TMPDIR/raw.$1" "$BATS_TEST_TMPDIR/dec.$1" "${@:3}"
}

@test "otlp: each window is one request holding its pprof's totals and stacks (cpu, off-cpu)" {
	for s in fp offcpu; do
		rm -rf "$OUT"/* "$BATS_TEST_TMPDIR/recv"
		receiver
		run replay "$s" --otlp-endpoint "http://127.0.0.1:$PORT"
		assert_success
		n=$(outputs "$OUT" diagnostics json | wc -l)
		[ "$n" -ge 2 ]
		[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq "$n" ]
		i=0
		for d in $(outputs "$OUT" diagnostics json); do
			[ "$(jq -r .otlp.status "$OUT/$d")" = exported ]
			[ "$(jq -r .otlp.attempts "$OUT/$d")" = 1 ]
			grep -q "^path /v1development/profiles$" "$RECV/req-$i.meta"
			grep -q "^encoding gzip$" "$RECV/req-$i.meta"
			grep -qi "^header Content-Type: application/x-protobuf$" "$RECV/req-$i.meta"
			for k in cpu off-cpu; do
				f=$(jq -r ".output_paths.\"$k\" // empty" "$OUT/$d")
				[ -n "$f" ] || continue
				run same_as_pprof "$i" "$f"
				assert_success
				echo "$s window $i $k: $output"
			done
			# one Profile per pprof sample type: 2 for cpu, 2 more with off-cpu
			np=$(decode "$i" | grep -c '^profile ')
			[ "$np" -eq $((2 * $(jq '.written_profiles | length' "$OUT/$d"))) ]
			i=$((i + 1))
		done
		kill "$RECV_PID"; wait "$RECV_PID" 2>/dev/null || true; RECV_PID=
	done
}

@test "otlp: protoc --decode reads a request with the project's .proto files alone" {
	command -v protoc >/dev/null || skip "protoc is not installed"
	receiver
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-compression none
	assert_success
	grep -q "^encoding none$" "$RECV/req-0.meta"
	run protoc_decode <"$RECV/req-0.pb"
	assert_success
	assert_output --partial 'key: "service.name"'
	assert_output --partial 'key: "process.pid"'
	assert_output --partial 'string_table: ""'
	refute_output --partial 'timestamps_unix_nano'
	# the dictionary's first string is "" and every table starts with its zero value
	run "$OTLPDECODE" <"$RECV/req-0.pb"
	assert_success
	assert_output --partial "resource process.pid="
	assert_output --partial "profile 0 samples/count"
	assert_output --partial "profile 1 cpu/nanoseconds"
}
