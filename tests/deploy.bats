#!/usr/bin/env bats
# The Kubernetes manifests of deploy/kubernetes, read with libyaml (tests/tools/yamlpaths.c):
# the fields the manual's "Docker and Kubernetes deployment" requires.

load helper

setup_file() {
	export YAMLPATHS="$BATS_FILE_TMPDIR/yamlpaths"
	# shellcheck disable=SC2086 # CFLAGS/LDFLAGS are word lists
	${CC:-cc} ${CFLAGS:-} -o "$YAMLPATHS" "$BATS_TEST_DIRNAME/tools/yamlpaths.c" ${LDFLAGS:-} -lyaml
}

DEPLOY="$BATS_TEST_DIRNAME/../deploy/kubernetes"

# paths FILE: the file's scalars, "DOC KIND PATH=VALUE", into $BATS_TEST_TMPDIR/paths.
paths() {
	"$YAMLPATHS" "$1" >"$BATS_TEST_TMPDIR/paths"
}

has() {
	grep -qxF -- "$1" "$BATS_TEST_TMPDIR/paths" || { echo "missing: $1"; return 1; }
}

@test "deploy: rustprofile.yaml: namespace, ServiceAccount, a ClusterRole that may only get Pods" {
	paths "$DEPLOY/rustprofile.yaml"
	has "0 Namespace metadata.name=rustprofile-system"
	has "1 ServiceAccount metadata.name=rustprofile"
	has "1 ServiceAccount metadata.namespace=rustprofile-system"
	has "2 ClusterRole rules[0].resources[0]=pods"
	has "2 ClusterRole rules[0].verbs[0]=get"
	# get on pods, nothing else
	run -0 grep -c '^2 ClusterRole rules\[[0-9]*\]\.\(verbs\|resources\)\[' "$BATS_TEST_TMPDIR/paths"
	assert_output 2
	has "3 ClusterRoleBinding roleRef.name=rustprofile-pod-reader"
	has "3 ClusterRoleBinding subjects[0].name=rustprofile"
	has "3 ClusterRoleBinding subjects[0].namespace=rustprofile-system"
}

@test "deploy: the DaemonSet: idle, hostPID, privileged, Unconfined seccomp, NODE_NAME, /profiles" {
	paths "$DEPLOY/rustprofile.yaml"
	local d="4 DaemonSet spec.template.spec"
	has "$d.serviceAccountName=rustprofile"
	has "$d.hostPID=true"
	has "$d.containers[0].securityContext.privileged=true"
	has "$d.containers[0].securityContext.seccompProfile.type=Unconfined"
	has "$d.containers[0].command[1]=infinity"
	has "$d.containers[0].env[0].name=NODE_NAME"
	has "$d.containers[0].env[0].valueFrom.fieldRef.fieldPath=spec.nodeName"
	has "$d.containers[0].volumeMounts[0].mountPath=/profiles"
	has "$d.volumes[0].hostPath.path=/var/lib/rustprofile"
	has "4 DaemonSet metadata.namespace=rustprofile-system"
	has "4 DaemonSet spec.selector.matchLabels.app.kubernetes.io/name=rustprofile"
	# The OTLP ConfigMap and Secret of otel-config.example.yaml, and the CA Secret, all optional.
	has "$d.containers[0].envFrom[0].configMapRef.name=rustprofile-otel"
	has "$d.containers[0].envFrom[0].configMapRef.optional=true"
	has "$d.containers[0].envFrom[1].secretRef.name=rustprofile-otel-headers"
	has "$d.containers[0].envFrom[1].secretRef.optional=true"
	has "$d.volumes[1].secret.secretName=rustprofile-otel-ca"
	has "$d.containers[0].volumeMounts[1].mountPath=/etc/rustprofile/otel"
}

@test "deploy: otel-config.example.yaml: the ConfigMap and Secret the DaemonSet reads, OTLP names of the manual" {
	paths "$DEPLOY/otel-config.example.yaml"
	has "0 ConfigMap metadata.name=rustprofile-otel"
	has "0 ConfigMap metadata.namespace=rustprofile-system"
	has "0 ConfigMap data.OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL=http/protobuf"
	has "0 ConfigMap data.OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION=gzip"
	has "1 Secret metadata.name=rustprofile-otel-headers"
	has "1 Secret metadata.namespace=rustprofile-system"
	run -0 grep -c '^1 Secret stringData.OTEL_EXPORTER_OTLP_PROFILES_HEADERS=' "$BATS_TEST_TMPDIR/paths"
	# every setting is one the manual names
	run -0 awk -F'[ .=]' '$2 == "ConfigMap" && $3 == "data" { print $4 }' "$BATS_TEST_TMPDIR/paths"
	for k in $output; do
		grep -q -- "$k" "$BATS_TEST_DIRNAME/../../shared/spec/rustprofile-manual.en.txt" ||
			grep -qx -- "$k" <<<"OTEL_SERVICE_NAME" || { echo "not in the manual: $k"; return 1; }
	done
}

@test "deploy: yamlpaths refuses a broken manifest with one line" {
	printf 'a: [1, 2\n' >"$BATS_TEST_TMPDIR/bad.yaml"
	run -1 "$YAMLPATHS" "$BATS_TEST_TMPDIR/bad.yaml"
	assert_output --regexp '^yamlpaths: .*bad\.yaml:[0-9]+: '
}
