#!/usr/bin/env bats
# serve: the Firefox profile, the gallery and the symbol API over HTTP (docs/serve.md), read
# back with curl, jq and headless Chromium; debuginfod from a real Debian debuginfod server
# on loopback, for serve and for a live record.

load helper
load debuginfod

# One recording of the stripped build-id workload (JSON and JSLB windows) for every test,
# and one debuginfod server indexing a copy of its debug file.
setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	chmod a+rx "$BATS_FILE_TMPDIR" 2>/dev/null || true
	rec=$BATS_FILE_TMPDIR/rec
	"$RP" launch --duration 2s --window 1s --unwind fp --cpu-frequency 199 \
		--firefox-profile json --output "$rec" -- "$RP_WORKLOADS/buildid/stripped_bid" 3 \
		>/dev/null 3>&-
	"$RP" launch --duration 1s --window 1s --unwind fp --cpu-frequency 199 \
		--firefox-profile jslb --output "$BATS_FILE_TMPDIR/jslb" -- \
		"$RP_WORKLOADS/buildid/stripped_bid" 2 >/dev/null 3>&-
	mkdir -p "$BATS_FILE_TMPDIR/src"
	cp -r "$RP_WORKLOADS/symdir" "$BATS_FILE_TMPDIR/src/"
	debuginfod_start "$BATS_FILE_TMPDIR/dbgd" "$BATS_FILE_TMPDIR/src/symdir"
	dport=$(cat "$BATS_FILE_TMPDIR/dbgd/port")
	local id i
	id=$(build_id "$RP_WORKLOADS/buildid/stripped_bid")
	for i in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$dport/buildid/$id/debuginfo" && break
		sleep 0.2
	done
}

teardown_file() {
	debuginfod_stop "$BATS_FILE_TMPDIR/dbgd"
}

setup() {
	require_root
	open_tmpdirs
	rec=$BATS_FILE_TMPDIR/rec
	dport=$(cat "$BATS_FILE_TMPDIR/dbgd/port")
	bid=$(build_id "$RP_WORKLOADS/buildid/stripped_bid")
	profile=$rec/$(outputs "$rec" firefox json.gz | head -n 1)
	breakpad=$(zcat "$profile" | jq -r '.libs[] | select(.name == "stripped_bid") | .breakpadId')
	spid=''
}

teardown() {
	[ -z "$spid" ] || { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; } || true
}

# serve ARGS...: starts serve on a free loopback port; sets $spid and $base.
serve() {
	"$RP" serve --listen 127.0.0.1:0 "$@" 2>"$BATS_TEST_TMPDIR/serve.log" 3>&- &
	spid=$!
	local i
	for i in $(seq 100); do
		base=$(sed -n 's/^serve: listening on //p' "$BATS_TEST_TMPDIR/serve.log")
		[ -z "$base" ] || return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/serve.log" >&2
	return 1
}

# status PATH [CURL ARGS...]: the HTTP status of a request.
status() {
	local p=$1
	shift
	curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' "$@" "$base$p"
}

# symbolicate ADDRESS...: the /symbolicate/v5 answer for addresses of stripped_bid.
symbolicate() {
	local frames='' a
	for a in "$@"; do frames="$frames${frames:+,}[0,$((a))]"; done
	curl -sf -X POST --data \
		"{\"jobs\":[{\"memoryMap\":[[\"stripped_bid\",\"$breakpad\"]],\"stacks\":[[$frames]]}]}" \
		"$base/symbolicate/v5"
}

# The file offset of a function of the stripped workload (the relative address the profile
# and the symbol API use: offsets equal addresses in its executable segment).
addr_of() {
	nm "$RP_WORKLOADS/symdir/.build-id/${bid:0:2}/${bid:2}.debug" |
		awk -v f="$1" '$3 == f { print "0x" $1 }'
}

@test "serve: --profile serves the file at GET /profile.json as JSON, and GET /healthz" {
	serve --profile "$profile"
	run -0 curl -sf -D "$BATS_TEST_TMPDIR/h" "$base/profile.json"
	[ "$output" = "$(zcat "$profile")" ]
	grep -qi '^content-type: application/json' "$BATS_TEST_TMPDIR/h"
	run -0 curl -sf "$base/healthz"
	[ "$(jq -r .status <<<"$output")" = ok ]
}

@test "serve: a JSLB profile is served as application/octet-stream, decoded at /api/profile/ID" {
	local j=$BATS_FILE_TMPDIR/jslb f
	f=$j/$(outputs "$j" firefox jslb.gz | head -n 1)
	serve --profile "$f"
	curl -sf -D "$BATS_TEST_TMPDIR/h" -o "$BATS_TEST_TMPDIR/p" "$base/profile.json"
	grep -qi '^content-type: application/octet-stream' "$BATS_TEST_TMPDIR/h"
	cmp "$BATS_TEST_TMPDIR/p" <(zcat "$f")
	kill "$spid"; wait "$spid" || true
	serve --directory "$j"
	id=$(curl -sf "$base/api/profiles" | jq -r '.profiles[0].id')
	run -0 curl -sf "$base/api/profile/$id"
	[ "$(jq -r '.meta.product' <<<"$output")" = stripped_bid ]
}

@test "serve: --directory lists every window with its diagnostics and decodes one by id" {
	serve --directory "$rec"
	run -0 curl -sf "$base/api/profiles"
	local n
	n=$(outputs "$rec" firefox json.gz | wc -l)
	[ "$(jq '.profiles | length' <<<"$output")" -eq "$n" ]
	[ "$(jq -r '.profiles[0].diagnostics.comm' <<<"$output")" = stripped_bid ]
	[ "$(jq -r '.profiles[0].diagnostics.cpu_samples' <<<"$output")" -gt 0 ]
	[ "$(jq -r '.profiles[0].file' <<<"$output")" = "$(basename "$profile")" ]
	id=$(jq -r '.profiles[0].id' <<<"$output")
	[ "$id" = "$(printf %s "$(basename "$profile")" | sha256sum | cut -c1-64)" ]
	run -0 jq -r '.profiles[0].firefox_url' <<<"$output"
	assert_output --partial "https://profiler.firefox.com/from-url/"
	assert_output --partial "symbolServer=$(jq -rn --arg u "$base" '$u|@uri')"
	run -0 curl -sf "$base/api/profile/$id"
	[ "$output" = "$(zcat "$profile")" ]
}

@test "serve: odd profile ids and path traversal are refused" {
	serve --directory "$rec"
	[ "$(status /api/profile/../../../etc/passwd --path-as-is)" = 400 ]
	[ "$(status /api/profile/%2e%2e%2fetc%2fpasswd)" = 400 ]
	[ "$(status /api/profile/ABC)" = 400 ]
	[ "$(status "/api/profile/$(printf 'A%.0s' $(seq 64))")" = 400 ]
	[ "$(status "/api/profile/$(printf '0%.0s' $(seq 64))")" = 404 ]
	[ "$(status /api/profile/)" = 400 ]
	jq -e .error "$BATS_TEST_TMPDIR/body" >/dev/null
	[ "$(status /nothing)" = 404 ]
	[ "$(status /profile.json)" = 404 ]
	[ "$(status /healthz -X PUT)" = 405 ]
	[ "$(status /healthz -X POST --data x)" = 405 ]
}

@test "serve: the gallery page rendered by headless Chromium lists the recorded windows" {
	serve --directory "$rec"
	run -0 timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--user-data-dir="$BATS_TEST_TMPDIR/chrome" --virtual-time-budget=10000 \
		--dump-dom "$base/" 2>/dev/null
	local f n
	n=$(outputs "$rec" firefox json.gz | wc -l)
	# rows the page's script built from /api/profiles, one per window
	[ "$(grep -o '<tr class="window">' <<<"$output" | wc -l)" -eq "$n" ]
	assert_output --partial "<p id=\"status\">$n windows</p>"
	for f in $(outputs "$rec" firefox json.gz); do
		assert_output --partial ">$f</a>"
	done
	assert_output --partial 'href="https://profiler.firefox.com/from-url/'
	assert_output --partial '>stripped_bid (pid '
}

@test "serve: the directory scan stops at 16,384 entries and lists at most 4,096 profiles" {
	local d=$BATS_TEST_TMPDIR/many
	mkdir -p "$d"
	(cd "$d" && seq -f 'firefox-x-%06g.json.gz' 1 16500 | xargs touch)
	serve --directory "$d"
	run -0 curl -sf "$base/api/profiles"
	[ "$(jq '.profiles | length' <<<"$output")" -eq 4096 ]
	[ "$(jq .scanned <<<"$output")" -eq 16384 ]
	[ "$(jq .truncated <<<"$output")" = true ]
}

@test "serve: a diagnostics file over 1 MiB is ignored, and said so" {
	local d=$BATS_TEST_TMPDIR/big name
	mkdir -p "$d"
	cp "$profile" "$d/"
	name=$(basename "$profile" .json.gz)
	head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$d/diagnostics-${name#firefox-}.json"
	serve --directory "$d"
	run -0 curl -sf "$base/api/profiles"
	assert_output --partial "diagnostics larger than 1 MiB: ignored"
}

# mkprofile FILE JSON: a gzip file holding that text.
mkprofile() {
	printf '%s' "$2" | gzip -1 >"$1"
}

@test "serve: the input limits: compressed, decompressed, threads, samples, stacks, functions" {
	local d=$BATS_TEST_TMPDIR
	truncate -s $((512 * 1024 * 1024 + 1)) "$d/firefox-big.json.gz"
	run -1 "$RP_BIN/serve" --profile "$d/firefox-big.json.gz" --listen 127.0.0.1:0
	assert_output --partial "more than the 536870912 allowed"
	head -c $((128 * 1024 * 1024 + 1)) /dev/zero | gzip -1 >"$d/firefox-z.json.gz"
	run -1 "$RP_BIN/serve" --profile "$d/firefox-z.json.gz" --listen 127.0.0.1:0
	assert_output --partial "decompresses to more than 134217728 bytes"
	mkprofile "$d/t.json.gz" "$(jq -cn '{meta: {}, threads: [range(4097) | {}]}')"
	run -1 "$RP_BIN/serve" --profile "$d/t.json.gz" --listen 127.0.0.1:0
	assert_output --partial "4097 threads, more than 4096"
	mkprofile "$d/s.json.gz" '{"meta":{},"threads":[{"samples":{"length":65537}}]}'
	run -1 "$RP_BIN/serve" --profile "$d/s.json.gz" --listen 127.0.0.1:0
	assert_output --partial "65537 samples, more than 65536"
	mkprofile "$d/k.json.gz" '{"meta":{},"threads":[],"shared":{"stackTable":{"length":65537}}}'
	run -1 "$RP_BIN/serve" --profile "$d/k.json.gz" --listen 127.0.0.1:0
	assert_output --partial "65537 stacks, more than 65536"
	mkprofile "$d/f.json.gz" '{"meta":{},"threads":[],"shared":{"funcTable":{"length":262145}}}'
	run -1 "$RP_BIN/serve" --profile "$d/f.json.gz" --listen 127.0.0.1:0
	assert_output --partial "262145 functions, more than 262144"
	mkprofile "$d/ok.json.gz" '{"meta":{},"threads":[{"samples":{"length":65536}}]}'
	serve --profile "$d/ok.json.gz"
	echo notgzip >"$d/firefox-bad.json.gz"
	run -1 "$RP_BIN/serve" --profile "$d/firefox-bad.json.gz" --listen 127.0.0.1:0
	assert_output --partial "not a complete gzip file"
}

@test "serve: bad options are refused with one line" {
	run -2 "$RP_BIN/serve" --listen 127.0.0.1:0
	assert_output --partial "exactly one of --profile FILE and --directory DIR"
	run -2 "$RP_BIN/serve" --profile "$profile" --directory "$rec"
	run -2 "$RP_BIN/serve" --directory "$rec" --debuginfod ftp://x
	assert_output --partial "not an http:// or https:// URL"
	run -1 "$RP_BIN/serve" --directory "$rec" --listen nonsense
	assert_output --partial "expected HOST:PORT"
	run -2 "$RP_BIN/serve" --directory "$rec" --cors-origin '*'
	run -2 "$RP_BIN/serve" --directory "$rec" --bearer-token short
}

@test "serve: POST bodies over 8 MiB get 413, answers over 32 MiB get 500" {
	serve --profile "$profile"
	head -c $((8 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big"
	[ "$(status /symbolicate/v5 -X POST --data-binary @"$BATS_TEST_TMPDIR/big")" = 413 ]
	# a million frames of an unknown module: under 8 MiB asked, over 32 MiB to answer
	python3 -c 'import sys; sys.stdout.write("{\"memoryMap\":[[\"x\",\"00\"]],\"stacks\":[[" + ",".join(["[0,1]"] * 1000000) + "]]}")' >"$BATS_TEST_TMPDIR/many"
	[ "$(status /symbolicate/v5 -X POST --data-binary @"$BATS_TEST_TMPDIR/many")" = 500 ]
	run -0 jq -r .error "$BATS_TEST_TMPDIR/body"
	assert_output --partial "would pass 33554432 bytes"
	[ "$(status /symbolicate/v5 -X POST --data 'not json')" = 400 ]
	[ "$(status /symbolicate/v5 -X POST --data '{"jobs":[{"memoryMap":[["a/b","00"]],"stacks":[]}]}')" = 400 ]
	[ "$(status /symbolicate/v5 -X POST --data '{"jobs":[{"memoryMap":[["a","00"]],"stacks":[[[1,0]]]}]}')" = 400 ]
	[ "$(status /source/v1 -X POST --data '{"debugName":"a","debugId":"00","moduleOffset":"12","file":"/x"}')" = 400 ]
	[ "$(status /asm/v1 -X POST --data '{"debugId":"00","startAddress":"0x1"}')" = 400 ]
}

@test "serve: a non-loopback --listen without a token refuses to start" {
	run -1 "$RP_BIN/serve" --directory "$rec" --listen 0.0.0.0:0
	assert_output --partial "not a loopback address: a bearer token is required"
	[ "${#lines[@]}" -eq 1 ]
}

@test "serve: with a bearer token, requests without it (or with another) get 401" {
	local t=$BATS_TEST_TMPDIR/token
	echo 0123456789abcdef0123 >"$t"
	chmod 600 "$t"
	serve --directory "$rec" --bearer-token-file "$t"
	[ "$(status /api/profiles)" = 401 ]
	[ "$(status /api/profiles -H 'Authorization: Bearer 0123456789abcdef012')" = 401 ]
	[ "$(status /api/profiles -H 'Authorization: Bearer 0123456789abcdef01234')" = 401 ]
	[ "$(status /symbolicate/v5 -X POST --data '{}')" = 401 ]
	[ "$(status /api/profiles -H 'Authorization: Bearer 0123456789abcdef0123')" = 200 ]
	kill "$spid"; wait "$spid" || true
	RUSTPROFILE_BEARER_TOKEN=fromtheenvironment1 serve --directory "$rec"
	[ "$(status /api/profiles)" = 401 ]
	[ "$(status /api/profiles -H 'Authorization: Bearer fromtheenvironment1')" = 200 ]
}

@test "serve: CORS is off by default; --cors-origin allows that exact origin and its preflight" {
	serve --profile "$profile"
	[ "$(status /symbolicate/v5 -X OPTIONS -H 'Origin: https://profiler.firefox.com')" = 405 ]
	curl -s -D "$BATS_TEST_TMPDIR/h" -o /dev/null -H 'Origin: https://profiler.firefox.com' \
		"$base/profile.json"
	! grep -qi '^access-control-allow-origin' "$BATS_TEST_TMPDIR/h" || fail "line 272: the negated check succeeded"
	kill "$spid"; wait "$spid" || true
	serve --profile "$profile" --cors-origin https://profiler.firefox.com
	curl -s -D "$BATS_TEST_TMPDIR/h" -o /dev/null -X OPTIONS \
		-H 'Origin: https://profiler.firefox.com' \
		-H 'Access-Control-Request-Headers: content-type, user-agent' "$base/symbolicate/v5"
	grep -q '^HTTP/1.1 204' "$BATS_TEST_TMPDIR/h"
	grep -qi '^access-control-allow-origin: https://profiler.firefox.com' "$BATS_TEST_TMPDIR/h"
	grep -qi '^access-control-allow-methods: GET, POST, OPTIONS' "$BATS_TEST_TMPDIR/h"
	grep -qi '^access-control-allow-headers: content-type, user-agent' "$BATS_TEST_TMPDIR/h"
	[ "$(status /symbolicate/v5 -X OPTIONS -H 'Origin: https://evil.example')" = 405 ]
	[ "$(status /symbolicate/v5 -X OPTIONS)" = 405 ]
	curl -s -D "$BATS_TEST_TMPDIR/h" -o /dev/null -H 'Origin: https://profiler.firefox.com' \
		"$base/profile.json"
	grep -qi '^access-control-allow-origin: https://profiler.firefox.com' "$BATS_TEST_TMPDIR/h"
	curl -s -D "$BATS_TEST_TMPDIR/h" -o /dev/null -H 'Origin: https://evil.example' \
		"$base/profile.json"
	! grep -qi '^access-control-allow-origin' "$BATS_TEST_TMPDIR/h" || fail "line 289: the negated check succeeded"
}

@test "serve: /symbolicate/v5 names a stripped workload's addresses through --symbol-dir" {
	local hot outer
	hot=$(addr_of stripped_hot) outer=$(addr_of stripped_outer)
	serve --profile "$profile"
	run -0 symbolicate "$((hot + 4))"
	[ "$(jq -r '.results[0].stacks[0][0].function // "none"' <<<"$output")" = none ]
	kill "$spid"; wait "$spid" || true
	serve --profile "$profile" --symbol-dir "$RP_WORKLOADS/symdir"
	run -0 symbolicate "$((hot + 4))" "$((outer + 2))"
	[ "$(jq -r '.results[0].stacks[0][0].function' <<<"$output")" = stripped_hot ]
	[ "$(jq -r '.results[0].stacks[0][0].function_offset' <<<"$output")" = 0x4 ]
	[ "$(jq -r '.results[0].stacks[0][1].function' <<<"$output")" = stripped_outer ]
	[ "$(jq -r '.results[0].stacks[0][0].module_offset' <<<"$output")" = "$(printf '0x%x' $((hot + 4)))" ]
	[ "$(jq -r ".results[0].found_modules[\"stripped_bid/$breakpad\"]" <<<"$output")" = true ]
	run -0 jq -r '.results[0].stacks[0][0].file' <<<"$output"
	assert_output --partial workloads/stripped.c
}

@test "serve: /source/v1 serves a file the debug info names, /asm/v1 disassembles with capstone" {
	local hot file
	hot=$(addr_of stripped_hot)
	serve --profile "$profile" --symbol-dir "$RP_WORKLOADS/symdir" --source-dir "$ROOT/workloads"
	file=$(symbolicate "$((hot + 4))" | jq -r '.results[0].stacks[0][0].file')
	run -0 curl -sf -X POST --data "{\"debugName\":\"stripped_bid\",\"debugId\":\"$breakpad\",\"moduleOffset\":\"$(printf 0x%x $((hot + 4)))\",\"file\":\"$file\"}" "$base/source/v1"
	[ "$(jq -r .source <<<"$output")" = "$(cat "$file")" ]
	[ "$(status /source/v1 -X POST --data "{\"debugName\":\"stripped_bid\",\"debugId\":\"$breakpad\",\"moduleOffset\":\"$(printf 0x%x $((hot + 4)))\",\"file\":\"/etc/passwd\"}")" = 403 ]
	run -0 curl -sf -X POST --data "{\"debugName\":\"stripped_bid\",\"debugId\":\"$breakpad\",\"startAddress\":\"$hot\",\"size\":\"0x10\"}" "$base/asm/v1"
	[ "$(jq -r .arch <<<"$output")" = x86_64 ]
	[ "$(jq -r '.instructions[0][0]' <<<"$output")" = 0 ]
	[ "$(jq -r '.instructions[0][1]' <<<"$output")" = "$(objdump -d -M intel --start-address="$hot" --stop-address=$((hot + 1)) "$RP_WORKLOADS/buildid/stripped_bid" | awk -F'\t' '/^ +[0-9a-f]+:/ { gsub(/ +$/, "", $3); gsub(/ +/, " ", $3); print $3; exit }')" ]
	[ "$(status /asm/v1 -X POST --data "{\"debugId\":\"0123\",\"startAddress\":\"0x1\",\"size\":\"0x1\"}")" = 404 ]
}

@test "serve: /symbolicate/v5 gets names through a loopback debuginfod server" {
	local hot
	hot=$(addr_of stripped_hot)
	serve --profile "$profile" --debuginfod "http://127.0.0.1:$dport"
	run -0 symbolicate "$((hot + 4))"
	[ "$(jq -r '.results[0].stacks[0][0].function' <<<"$output")" = stripped_hot ]
	run -0 curl -sf "$base/healthz"
	[ "$(jq .debuginfod.fetched <<<"$output")" -ge 1 ]
	[ "$(jq '.debuginfod | .queried >= .fetched and .bytes_fetched > 0' <<<"$output")" = true ]
}

@test "serve: a failing or oversized debuginfod fetch leaves addresses and says so" {
	local hot dead
	hot=$(addr_of stripped_hot) dead=$(free_port)
	serve --profile "$profile" --debuginfod "http://127.0.0.1:$dead"
	run -0 symbolicate "$((hot + 4))"
	[ "$(jq -r '.results[0].stacks[0][0].function // "none"' <<<"$output")" = none ]
	[ "$(jq -r '.results[0].stacks[0][0].module_offset' <<<"$output")" = "$(printf '0x%x' $((hot + 4)))" ]
	grep -q "debuginfod: no debug file for build id $bid: Connection refused" \
		"$BATS_TEST_TMPDIR/serve.log"
	[ "$(curl -sf "$base/healthz" | jq .debuginfod.failed)" -eq 1 ]
	kill "$spid"; wait "$spid" || true
	RUSTPROFILE_DEBUGINFOD_MAX_BYTES=1000 serve --profile "$profile" \
		--debuginfod "http://127.0.0.1:$dport"
	run -0 symbolicate "$((hot + 4))"
	[ "$(jq -r '.results[0].stacks[0][0].function // "none"' <<<"$output")" = none ]
	grep -q "debuginfod: no debug file for build id $bid: larger than 1000 bytes, not kept" \
		"$BATS_TEST_TMPDIR/serve.log"
	[ "$(curl -sf "$base/healthz" | jq .debuginfod.oversized)" -eq 1 ]
}

@test "serve: fetches from a debuginfod server that never answers stop at the 30 s budget" {
	local hot hang
	hot=$(addr_of stripped_hot) hang=$(free_port)
	# accepts connections and never answers
	python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); kept = []
while True: kept.append(s.accept())' "$hang" 3>&- &
	local lpid=$! i
	for i in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$hang") 2>/dev/null && break
		sleep 0.1
	done
	serve --profile "$profile" --debuginfod "http://127.0.0.1:$hang"
	SECONDS=0
	run -0 symbolicate "$((hot + 4))"
	local took=$SECONDS
	kill "$lpid" 2>/dev/null || true
	[ "$(jq -r '.results[0].stacks[0][0].function // "none"' <<<"$output")" = none ]
	[ "$took" -ge 29 ]
	[ "$took" -le 40 ]
	grep -q "debuginfod: no debug file for build id $bid: the 30 s budget is spent" \
		"$BATS_TEST_TMPDIR/serve.log"
	[ "$(curl -sf "$base/healthz" | jq .debuginfod.out_of_time)" -eq 1 ]
}

@test "serve: record --debuginfod names a stripped workload from the loopback server" {
	local out=$BATS_TEST_TMPDIR/out
	start_workload buildid/stripped_bid 30
	"$RP" record --pid "$wpid" --duration 2s --window 2s --unwind fp --cpu-frequency 499 \
		--debuginfod "http://127.0.0.1:$dport" --output "$out" >/dev/null 3>&-
	stop_workload
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	assert_output --partial stripped_hot
}

@test "serve: record --debuginfod with a failing or oversized fetch keeps addresses and says so" {
	local out=$BATS_TEST_TMPDIR/out dead
	dead=$(free_port)
	start_workload buildid/stripped_bid 30
	"$RP" record --pid "$wpid" --duration 2s --window 2s --unwind fp --cpu-frequency 499 \
		--debuginfod "http://127.0.0.1:$dead" --output "$out" >/dev/null 3>&-
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	refute_output --partial stripped_hot
	run -0 jq -r '.warnings[]' "$out/$(outputs "$out" diagnostics json | tail -n 1)"
	assert_output --partial "debuginfod: no debug file for build id $bid: Connection refused"
	rm -rf "$out"
	RUSTPROFILE_DEBUGINFOD_MAX_BYTES=1000 "$RP" record --pid "$wpid" --duration 2s \
		--window 2s --unwind fp --cpu-frequency 499 \
		--debuginfod "http://127.0.0.1:$dport" --output "$out" >/dev/null 3>&-
	stop_workload
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	refute_output --partial stripped_hot
	run -0 jq -r '.warnings[]' "$out/$(outputs "$out" diagnostics json | tail -n 1)"
	assert_output --partial "larger than 1000 bytes, not kept"
}

@test "serve: replay --debuginfod names a saved stream's stripped workload" {
	local out=$BATS_TEST_TMPDIR/out
	start_workload buildid/stripped_bid 30
	"$RP" record --pid "$wpid" --duration 2s --window 2s --unwind fp --cpu-frequency 499 \
		--save-stream "$BATS_TEST_TMPDIR/rec.stream" --output "$out" >/dev/null 3>&-
	stop_workload
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	refute_output --partial stripped_hot
	"$RP" replay --input "$BATS_TEST_TMPDIR/rec.stream" --module-cache "$out/.modules" \
		--debuginfod "http://127.0.0.1:$dport" --output "$BATS_TEST_TMPDIR/re" >/dev/null
	run -0 pprof -top "$BATS_TEST_TMPDIR/re/$(outputs "$BATS_TEST_TMPDIR/re" cpu pb.gz | tail -n 1)"
	assert_output --partial stripped_hot
}

# debuginfo requests the loopback server has answered so far
debuginfo_requests() {
	curl -sf "http://127.0.0.1:$dport/metrics" |
		awk -F' ' '/^http_requests_total\{type="debuginfo"\}/ { n = $2 } END { print n + 0 }'
}

@test "serve: without --debuginfod nothing is asked of a server, DEBUGINFOD_URLS or not" {
	local out=$BATS_TEST_TMPDIR/out before hot
	before=$(debuginfo_requests)
	start_workload buildid/stripped_bid 30
	DEBUGINFOD_URLS="http://127.0.0.1:$dport" "$RP" record --pid "$wpid" --duration 2s \
		--window 2s --unwind fp --cpu-frequency 499 --output "$out" >/dev/null 3>&-
	stop_workload
	run -0 pprof -top "$out/$(outputs "$out" cpu pb.gz | tail -n 1)"
	refute_output --partial stripped_hot
	hot=$(addr_of stripped_hot)
	DEBUGINFOD_URLS="http://127.0.0.1:$dport" serve --profile "$profile"
	run -0 symbolicate "$((hot + 4))"
	[ "$(jq -r '.results[0].stacks[0][0].function // "none"' <<<"$output")" = none ]
	[ "$(debuginfo_requests)" -eq "$before" ]
}
