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
			# protoc reads every request with the .proto files alone
			if command -v protoc >/dev/null; then
				protoc_decode <"$RECV/req-$i.pb" >/dev/null
			fi
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

@test "otlp: 503 twice then 200: the window is exported at its third attempt" {
	receiver --answers 503,503,200
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"exported","attempts":3,"rejected_profiles":0,"error":null}' ]
	[ "$(otlp_of 1)" = '{"status":"exported","attempts":1,"rejected_profiles":0,"error":null}' ]
	# the same body each time: prepared once, sent again
	cmp "$RECV/req-0.pb" "$RECV/req-2.pb"
	[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq 4 ]
}

@test "otlp: 429 with Retry-After: 2 waits two seconds, then exports" {
	receiver --answers 429ra:2,200
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"exported","attempts":2,"rejected_profiles":0,"error":null}' ]
	t0=$(awk '/^time/ { print $2 }' "$RECV/req-0.meta")
	t1=$(awk '/^time/ { print $2 }' "$RECV/req-1.meta")
	awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.9 && b - a < 5) }'
}

@test "otlp: 400 is not retried: the window fails with the receiver's message" {
	receiver --answers 400
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"failed","attempts":1,"rejected_profiles":0,"error":"HTTP 400: receiver says 400"}' ]
	[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq 2 ]
	assert_output --partial "emit-otlp: 2 of 2 windows could not be exported"
	# the local files stay
	[ "$(outputs "$OUT" cpu pb.gz | wc -l)" -eq 2 ]
	[ "$(outputs "$OUT" diagnostics json | wc -l)" -eq 2 ]
}

@test "otlp: a success with rejected profiles is partial, with the count and the message" {
	receiver --answers partial:1
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"partial","attempts":1,"rejected_profiles":1,"error":"some profiles were rejected"}' ]
}

@test "otlp: an answer over 1 MiB ends the window's export, not retried" {
	receiver --answers big
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"failed","attempts":1,"rejected_profiles":0,"error":"HTTP 200 with a body over 1 MiB"}' ]
	[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq 1 ]
}

@test "otlp: a receiver that hangs past --otlp-timeout: that attempt times out, the next exports" {
	receiver --answers hang:8,200
	SECONDS=0
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-timeout 1s
	assert_success
	[ "$(otlp_of 0)" = '{"status":"exported","attempts":2,"rejected_profiles":0,"error":null}' ]
	[ "$SECONDS" -lt 7 ]    # the hung answer was not waited for
	[ "$(outputs "$OUT" cpu pb.gz | wc -l)" -eq 1 ]
}

@test "otlp: a closed port: five attempts, then failed; the local files stay" {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$port"
	assert_success
	run otlp_of 0
	[[ "$output" == '{"status":"failed","attempts":5,"rejected_profiles":0,"error":"Couldn'"'"'t connect to server: '* ]]
	[ "$(outputs "$OUT" cpu pb.gz | wc -l)" -eq 1 ]
}

# tls_certs DIR: a test CA and a server certificate for 127.0.0.1 signed by it (openssl).
tls_certs() {
	local d=$1
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rustprofile test CA" \
		-keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$d/srv.key" \
		-out "$d/srv.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext"
	openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/ext" -out "$d/srv.pem" 2>/dev/null
	chmod a+r "$d"/*
}

@test "otlp: https with the test CA through --otlp-ca exports; without it, fails at once" {
	tls_certs "$BATS_TEST_TMPDIR/tls"
	receiver --tls "$BATS_TEST_TMPDIR/tls/srv.pem" "$BATS_TEST_TMPDIR/tls/srv.key"
	run replay fp --window 5s --otlp-endpoint "https://127.0.0.1:$PORT" \
		--otlp-ca "$BATS_TEST_TMPDIR/tls/ca.pem"
	assert_success
	[ "$(otlp_of 0)" = '{"status":"exported","attempts":1,"rejected_profiles":0,"error":null}' ]
	run same_as_pprof 0 "$(outputs "$OUT" cpu pb.gz | sed "s|^|$OUT/|")"
	assert_success
	# the generic variable names the CA when no option does
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_CERTIFICATE=$BATS_TEST_TMPDIR/tls/ca.pem \
		run replay fp --window 5s --otlp-endpoint "https://127.0.0.1:$PORT"
	assert_success
	[ "$(jq -r .otlp.status "$OUT"/diagnostics-*.json)" = exported ]
	# without the CA the certificate is not trusted: a TLS error, not retried
	rm -rf "$OUT"/*
	run replay fp --window 5s --otlp-endpoint "https://127.0.0.1:$PORT"
	assert_success
	run otlp_of 0
	assert_output --partial '"status":"failed","attempts":1,'
	assert_output --partial 'certificate'
	# a CA file that is no PEM certificate is refused before anything starts
	echo nonsense >"$BATS_TEST_TMPDIR/bad.pem"
	rm -rf "$OUT"/*
	run replay fp --otlp-endpoint "https://127.0.0.1:$PORT" --otlp-ca "$BATS_TEST_TMPDIR/bad.pem"
	assert_failure 1
	assert_output "emit-otlp: --otlp-ca: '$BATS_TEST_TMPDIR/bad.pem' holds no PEM certificate"
	[ -z "$(ls "$OUT")" ]
}

@test "otlp: a receiver slower than the windows fills the queue: later windows dropped, every local file written" {
	receiver --answers slow:2.5
	run replay fp --window 200ms --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	n=$(outputs "$OUT" diagnostics json | wc -l)
	[ "$n" -ge 8 ]
	[ "$(outputs "$OUT" cpu pb.gz | wc -l)" -eq "$n" ]
	exported=0 dropped=0
	for d in $(outputs "$OUT" diagnostics json); do
		case $(jq -r .otlp.status "$OUT/$d") in
		exported) exported=$((exported + 1)) ;;
		dropped) dropped=$((dropped + 1))
			[ "$(jq -c .otlp "$OUT/$d")" = '{"status":"dropped","attempts":0,"rejected_profiles":0,"error":null}' ] ;;
		*) false ;;
		esac
	done
	echo "exported $exported dropped $dropped of $n"
	[ "$dropped" -ge 1 ]
	[ "$exported" -ge 4 ]
	[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq "$exported" ]
	# the first four windows are the ones the queue took
	for i in 0 1 2 3; do [ "$(jq -r .otlp.status "$OUT"/diagnostics-*-00000$i-*.json)" = exported ]; done
}

# path_of N: the path request N was sent to.
path_of() {
	awk '/^path / { print $2 }' "$RECV/req-$1.meta"
}

@test "otlp: endpoint precedence: option, then the Profiles variable as is, then the generic one plus the Profiles path" {
	receiver
	local u=http://127.0.0.1:$PORT
	OTEL_EXPORTER_OTLP_ENDPOINT=$u/gen run replay fp --window 5s
	assert_success
	[ "$(path_of 0)" = /gen/v1development/profiles ]
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_ENDPOINT=$u/ run replay fp --window 5s
	assert_success
	[ "$(path_of 1)" = /v1development/profiles ]
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_ENDPOINT=$u/gen OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT=$u/prof/x \
		run replay fp --window 5s
	assert_success
	[ "$(path_of 2)" = /prof/x ]
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_ENDPOINT=$u/gen OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT=$u/prof/x \
		run replay fp --window 5s --otlp-endpoint "$u/cli"
	assert_success
	[ "$(path_of 3)" = /cli ]
	rm -rf "$OUT"/*
	run replay fp --window 5s --otlp-endpoint "$u"
	assert_success
	[ "$(path_of 4)" = /v1development/profiles ]
	# no endpoint anywhere: no export, no otlp object, no request
	rm -rf "$OUT"/*
	run replay fp --window 5s --otlp-header a=b --otlp-timeout 1s
	assert_success
	[ "$(otlp_of 0)" = null ]
	[ "$(ls "$RECV"/req-*.pb | wc -l)" -eq 5 ]
}

@test "otlp: endpoints must be http(s) URLs without credentials; the protocol only http/protobuf" {
	run replay fp --otlp-endpoint ftp://127.0.0.1:1/
	assert_failure 1
	assert_output "emit-otlp: --otlp-endpoint: 'ftp://127.0.0.1:1/' is not an http:// or https:// URL"
	run replay fp --otlp-endpoint http://user:hunter22@127.0.0.1:1/
	assert_failure 1
	assert_output "emit-otlp: --otlp-endpoint: the URL must not include credentials"
	OTEL_EXPORTER_OTLP_ENDPOINT=http://u:hunter22@127.0.0.1:1 run replay fp
	assert_failure 1
	assert_output "emit-otlp: OTEL_EXPORTER_OTLP_ENDPOINT: the URL must not include credentials"
	OTEL_EXPORTER_OTLP_PROTOCOL=grpc run replay fp --otlp-endpoint http://127.0.0.1:1
	assert_failure 1
	assert_output "emit-otlp: OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported (only http/protobuf)"
	OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL=http/json OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
		run replay fp --otlp-endpoint http://127.0.0.1:1
	assert_failure 1
	assert_output "emit-otlp: OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL: 'http/json' is not supported (only http/protobuf)"
	run replay fp --otlp-endpoint http://127.0.0.1:1 --otlp-compression zstd
	assert_failure 1
	assert_output "emit-otlp: --otlp-compression: 'zstd' is not none or gzip"
	OTEL_EXPORTER_OTLP_TIMEOUT=10s run replay fp --otlp-endpoint http://127.0.0.1:1
	assert_failure 1
	assert_output "emit-otlp: OTEL_EXPORTER_OTLP_TIMEOUT: '10s' is not a number of milliseconds from 1 to 86400000"
	[ -z "$(ls "$OUT")" ]
	# the Profiles protocol wins over a generic one meant for other signals
	receiver
	OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL=http/protobuf OTEL_EXPORTER_OTLP_PROTOCOL=grpc \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0 | jq -r .status)" = exported ]
}

@test "otlp: headers, compression and timeout: option, then the Profiles variable, then the generic one" {
	receiver --answers 200,200,200,200,hang:2,200,hang:2
	OTEL_EXPORTER_OTLP_HEADERS="x-who=generic,x-other=g" OTEL_EXPORTER_OTLP_COMPRESSION=none \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	grep -qx "header x-who: generic" "$RECV/req-0.meta"
	grep -qx "header x-other: g" "$RECV/req-0.meta"
	grep -qx "encoding none" "$RECV/req-0.meta"
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_HEADERS="x-who=generic,x-other=g" \
	OTEL_EXPORTER_OTLP_PROFILES_HEADERS="x-who=profiles%20env" \
	OTEL_EXPORTER_OTLP_COMPRESSION=none OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION=gzip \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	grep -qx "header x-who: profiles env" "$RECV/req-1.meta"
	! grep -q "x-other" "$RECV/req-1.meta" || fail "line 354: the negated check succeeded"
	grep -qx "encoding gzip" "$RECV/req-1.meta"
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_PROFILES_HEADERS="x-who=profiles" OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION=gzip \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" \
		--otlp-header x-who=cli --otlp-header "x-two=2" --otlp-compression none
	assert_success
	grep -qx "header x-who: cli" "$RECV/req-2.meta"
	grep -qx "header x-two: 2" "$RECV/req-2.meta"
	grep -qx "encoding none" "$RECV/req-2.meta"
	# the generic default: gzip
	rm -rf "$OUT"/*
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	grep -qx "encoding gzip" "$RECV/req-3.meta"
	# timeout: the variables count milliseconds; the option wins over them
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_TIMEOUT=30000 OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT=500 \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0 | jq -r .attempts)" = 2 ]  # req-4 hung past 500 ms, req-5 answered
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT=500 \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-timeout 5s
	assert_success
	[ "$(otlp_of 0 | jq -c '[.status, .attempts]')" = '["exported",1]' ]  # req-6 waited for
}

@test "otlp: resource attributes: detected, OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, then the option" {
	receiver
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	run decode 0
	assert_line "resource service.name=cpu_split"
	assert_line "resource process.executable.name=cpu_split"
	assert_line --regexp '^resource process.pid=[0-9]+$'
	assert_line "resource rustprofile.target.kind=pid"
	rm -rf "$OUT"/*
	OTEL_RESOURCE_ATTRIBUTES="service.name=from-attrs,deployment.environment=stag%2Cing" \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT"
	run decode 1
	assert_line "resource service.name=from-attrs"
	assert_line "resource deployment.environment=stag,ing"
	rm -rf "$OUT"/*
	OTEL_RESOURCE_ATTRIBUTES="service.name=from-attrs,team=a" OTEL_SERVICE_NAME=svc \
		run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" \
		--resource-attribute team=b --resource-attribute "host.name=h 1"
	run decode 2
	assert_line "resource service.name=svc"
	assert_line "resource team=b"
	assert_line "resource host.name=h 1"
	rm -rf "$OUT"/*
	OTEL_SERVICE_NAME=svc run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" \
		--resource-attribute service.name=cli
	run decode 3
	assert_line "resource service.name=cli"
}

@test "otlp: a header value given by option or environment is in no file written and on no stderr line" {
	local cli=cli-secret-7f3a9 envs=env-secret-51c2e
	receiver --answers echo400
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-header "Authorization=Bearer $cli"
	assert_success
	grep -q "Bearer $cli" "$RECV/req-0.meta"     # it was sent
	refute_output --partial "$cli"
	! grep -rq "$cli" "$OUT" || fail "line 418: the negated check succeeded"
	jq -r .otlp.error "$OUT"/diagnostics-*-000000-*.json | grep -qx 'HTTP 400: bad request with Authorization: \*\*\*'
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_PROFILES_HEADERS="x-api-key=$envs" \
		run replay fp --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	grep -q "x-api-key: $envs" "$RECV/req-2.meta"
	refute_output --partial "$envs"
	! grep -rq "$envs" "$OUT" || fail "line 426: the negated check succeeded"
	# a bad header is named by its key, never by its value
	rm -rf "$OUT"/*
	OTEL_EXPORTER_OTLP_HEADERS="x-api-key=$envs%0A" run replay fp --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_failure 1
	assert_output "emit-otlp: OTEL_EXPORTER_OTLP_HEADERS: the value of 'x-api-key' has a control character"
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-header "bad key=$cli"
	assert_failure 1
	assert_output "emit-otlp: --otlp-header: 'bad key' is not a header name"
	# the stages' own stderr files are gone with the run; the emitter's command line is
	# the driver's: nothing else holds the value
}

@test "otlp: --otlp-timeline sends one cpu/nanoseconds profile of timestamped samples; --max-timeline-samples bounds it" {
	receiver
	run replay fp --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-timeline
	assert_success
	i=0
	for d in $(outputs "$OUT" diagnostics json); do
		n=$(jq .otlp.timeline_samples "$OUT/$d")
		[ "$(jq -c '.otlp | [.status, .timeline_enabled, .timeline_dropped_samples, .timeline_timestamp_errors]' "$OUT/$d")" = '["exported",true,0,0]' ]
		run decode "$i"
		assert_success
		# the aggregated CPU source is not sent a second time
		[ "$(grep -c '^profile ' <<<"$output")" -eq 1 ]
		assert_line --regexp "^profile 0 cpu/nanoseconds samples=[0-9]+ total=[0-9]+ period=[0-9]+/cpu/nanoseconds timestamps=$n "
		assert_output --partial " thread.name=rp-worker "
		# every timestamp inside the window
		t0=$(jq .window_start_unix_nanos "$OUT/$d") t1=$(jq .window_end_unix_nanos "$OUT/$d")
		grep '^point ' <<<"$output" | awk -v a="$t0" -v b="$t1" '$3 < a || $3 >= b { bad = 1 } END { exit bad }'
		# the pprof's time per stack is the sum of the points; its sample count theirs
		run same_as_pprof "$i" "$OUT/$(jq -r .output_paths.cpu "$OUT/$d" | xargs basename)" --timeline
		assert_success
		echo "window $i: $output"
		i=$((i + 1))
	done
	rm -rf "$OUT"/*
	run replay fp --window 5s --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-timeline \
		--max-timeline-samples 16
	assert_success
	run otlp_of 0
	[ "$(jq .timeline_samples <<<"$output")" -eq 16 ]
	[ "$(jq .timeline_dropped_samples <<<"$output")" -gt 0 ]
	run decode "$i"
	assert_line --regexp '^profile 0 cpu/nanoseconds .* timestamps=16 '
}

@test "otlp: import exports too; an imported event keeps its own sample type" {
	local perfgen=$BATS_TEST_TMPDIR/perfgen cap=$BATS_TEST_TMPDIR/hybrid.data
	${CC:-cc} -std=c17 -D_GNU_SOURCE -o "$perfgen" "$TOOLS/perfgen.c" -lelf
	"$perfgen" hybrid "$cap" "$RP_WORKLOADS/cpu_split" 0
	receiver
	run "$RP" import --input "$cap" --output "$OUT" --otlp-endpoint "http://127.0.0.1:$PORT"
	assert_success
	[ "$(otlp_of 0 | jq -r .status)" = exported ]
	run decode 0
	assert_success
	assert_line --regexp '^profile 0 samples/count samples=[0-9]+ total=9 '
	assert_line --regexp '^profile 1 cycles/count samples=[0-9]+ total=[0-9]+ period=0/cycles/count '
	run same_as_pprof 0 "$OUT/$(outputs "$OUT" cpu pb.gz | head -n 1)"
	assert_success
}

@test "otlp: SIGTERM to the driver while exports wait: they fail at once as cancelled, local files stay" {
	receiver --answers slow:4
	"$RP" replay --input "$GOLDEN/fp.stream" --output "$OUT" --window 200ms \
		--otlp-endpoint "http://127.0.0.1:$PORT" >"$BATS_TEST_TMPDIR/log" 2>&1 &
	local drv=$!
	# the replay itself is quick: then the exports wait for the slow receiver
	for _ in $(seq 100); do [ -s "$RECV/req-0.meta" ] && break; sleep 0.05; done
	sleep 0.5
	SECONDS=0
	kill -TERM "$drv"
	wait "$drv"
	[ "$SECONDS" -lt 3 ]
	n=$(outputs "$OUT" diagnostics json | wc -l)
	[ "$n" -ge 8 ]
	[ "$(outputs "$OUT" cpu pb.gz | wc -l)" -eq "$n" ]
	[ "$(otlp_of 0)" = '{"status":"failed","attempts":1,"rejected_profiles":0,"error":"export cancelled at teardown"}' ]
	for i in 1 2 3; do
		[ "$(otlp_of "$i")" = '{"status":"failed","attempts":0,"rejected_profiles":0,"error":"export cancelled at teardown"}' ]
	done
	[ "$(otlp_of 4 | jq -r .status)" = dropped ]
	grep -q "emit-otlp: 4 of 4 windows could not be exported" "$BATS_TEST_TMPDIR/log"
}

@test "otlp: a window without any sample is skipped: nothing is sent" {
	local gen=$BATS_TEST_TMPDIR/streamgen
	${CC:-cc} -std=c17 -D_GNU_SOURCE -I"$BATS_TEST_DIRNAME/../lib" ${LDFLAGS:-} -o "$gen" \
		"$TOOLS/streamgen.c" "$RP_BIN/../lib/librp.a" -lz -lm
	receiver
	"$gen" empty | "$RP_BIN/emit-otlp" --output "$OUT" --endpoint "http://127.0.0.1:$PORT" |
		"$RP_BIN/commit" --output "$OUT" >/dev/null
	[ "$(otlp_of 0)" = '{"status":"skipped","attempts":0,"rejected_profiles":0,"error":null}' ]
	[ ! -e "$RECV/req-0.pb" ]
	# and the stage on its own, through the skeleton: --check resolves, says enabled or not
	run -0 "$RP_BIN/emit-otlp" --check
	assert_output disabled
	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 run -0 "$RP_BIN/emit-otlp" --check
	assert_output enabled
}

@test "otlp: a live record exports its windows, confined, as the stages' user" {
	require_root
	receiver
	start_workload cpu_split 10
	open_tmpdirs
	run "$RP" record --pid "$wpid" --duration 2s --window 1s --otlp-endpoint "http://127.0.0.1:$PORT" \
		--output "$OUT"
	stop_workload
	assert_success
	n=$(outputs "$OUT" diagnostics json | wc -l)
	[ "$n" -ge 2 ]
	i=0
	for d in $(outputs "$OUT" diagnostics json); do
		[ "$(jq -r .otlp.status "$OUT/$d")" = exported ]
		run same_as_pprof "$i" "$OUT/$(outputs "$OUT" cpu pb.gz | sed -n "$((i + 1))p")"
		assert_success
		i=$((i + 1))
	done
	run decode 0
	assert_line "resource process.pid=$wpid"
}

@test "otlp: without an endpoint or --otlp option, emit-otlp is not even started" {
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	for f in "$RP_BIN"/*; do
		[ "$(basename "$f")" = emit-otlp ] || ln -s "$f" "$bin/"
	done
	RP_BIN=$bin run "$RP" replay --input "$GOLDEN/fp.stream" --output "$OUT"
	assert_success
	[ "$(otlp_of 0)" = null ]
	RP_BIN=$bin run "$RP" replay --input "$GOLDEN/fp.stream" --output "$OUT" \
		--otlp-endpoint http://127.0.0.1:1
	assert_failure 1
	assert_output --partial "stage 'emit-otlp' not found"
}

@test "otlp: a heap window is four Profiles holding the heap pprof's values and stacks" {
	require_root
	receiver
	start_workload heap_mix 30
	open_tmpdirs
	run "$RP" record --pid "$wpid" --profiles heap --unwind fp --alloc-interval 16KiB \
		--duration 2s --window 2s --otlp-endpoint "http://127.0.0.1:$PORT" --output "$OUT"
	stop_workload
	assert_success
	d=$OUT/$(outputs "$OUT" diagnostics json | head -n 1)
	[ "$(jq -r .otlp.status "$d")" = exported ]
	heap=$OUT/$(outputs "$OUT" heap pb.gz | head -n 1)
	run -0 pprof -raw "$heap"
	assert_output --partial "alloc_objects/count alloc_space/bytes inuse_objects/count"
	run same_as_pprof 0 "$heap"
	assert_success
	assert_output --partial "alloc_space/bytes"
	assert_output --partial "inuse_space/bytes"
	run decode 0
	assert_output --partial "profile 3 inuse_space/bytes"
	assert_output --partial "period=16384/space/bytes"
}
