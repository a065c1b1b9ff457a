/* collect/ctrjson.c, ctrpod.c, ctrcgroup.c: what is taken from a Docker inspect answer and a
 * Pod object, the container selection rules, and the cgroup directories a Pod's container
 * may have (reference: containers-kubernetes.md sections 2, 6-9). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "../../collect/ctarget.h"

#define ID "e35fae14c10f6b84110e5cff23a320b6749c6cf111726c6ad9890b6314fe425a"
#define ID2 "5771a671cd6fdf4817bef3e882ca9c905ebd99d832318a5b5f93f0790205433c"
#define UID "2c114174-6b21-45b8-b916-8ea27e912727"

static int
docker(const char *json, struct ctr_identity *id, char *err)
{
	return ctr_docker_parse(json, strlen(json), id, err, 300);
}

static void
test_docker(void)
{
	struct ctr_identity id;
	char err[300];

	CHECK(docker("{\"Id\":\"" ID "\",\"Name\":\"/web\",\"State\":{\"Status\":\"running\","
		     "\"Running\":true,\"Pid\":48211,\"StartedAt\":\"2026-08-20T09:14:03.1Z\"}}",
		     &id, err) == 0);
	CHECK(strcmp(id.id, ID) == 0 && strcmp(id.name, "web") == 0 && id.pid == 48211);
	CHECK(strcmp(id.started_at, "2026-08-20T09:14:03.1Z") == 0 && id.kind == CTR_DOCKER);
	/* Paused: Running is true, the status says otherwise; no pid to profile. */
	CHECK(docker("{\"Id\":\"" ID "\",\"Name\":\"/web\",\"State\":{\"Status\":\"paused\","
		     "\"Running\":true,\"Pid\":48211}}", &id, err) == 0 && id.pid == 0);
	CHECK(docker("{\"Id\":\"" ID "\",\"State\":{\"Status\":\"exited\",\"Pid\":0}}", &id,
		     err) == 0 && id.pid == 0 && !id.started_at[0]);
	/* Upper-case hex is the same ID. */
	CHECK(docker("{\"Id\":\"E35FAE14C10F6B84110E5CFF23A320B6749C6CF111726C6AD9890B6314FE425A\","
		     "\"State\":{\"Status\":\"exited\"}}", &id, err) == 0 && strcmp(id.id, ID) == 0);
	CHECK(docker("{\"Id\":\"e35f\",\"State\":{\"Status\":\"running\",\"Pid\":1}}", &id, err) < 0);
	CHECK(strstr(err, "64-digit Id") != NULL);
	CHECK(docker("{\"Id\":\"" ID "\",\"State\":{\"Status\":\"running\",\"Pid\":\"12\"}}", &id,
		     err) < 0 && strstr(err, "State.Pid"));
	CHECK(docker("{\"Id\":\"" ID "\",\"State\":{\"Status\":\"running\",\"Pid\":-4}}", &id,
		     err) < 0);
	CHECK(docker("{\"Id\":\"" ID "\",\"State\":{\"Status\":\"running\"}}", &id, err) < 0);
	CHECK(docker("[1]", &id, err) < 0 && docker("{\"Id\":", &id, err) < 0);
	CHECK(docker("{\"Id\":\"" ID "\",\"Id\":\"" ID "\",\"State\":{\"Status\":\"exited\"}}",
		     &id, err) < 0); /* a duplicate key is not guessed at */
	char msg[64];
	const char *e = "{\"message\":\"No such container: x\\nmore\"}";
	CHECK(ctr_api_message(e, strlen(e), msg, sizeof(msg)) == 0);
	CHECK(strcmp(msg, "No such container: x more") == 0);
	CHECK(ctr_api_message("{}", 2, msg, sizeof(msg)) < 0);
	CHECK(ctr_api_message("oops", 4, msg, sizeof(msg)) < 0);
}

/* A Pod in the API server's shape, with the given application containers' JSON. */
static int
pod(const char *apps, const char *statuses, const char *want, struct ctr_identity *id,
    char *err)
{
	char json[4096];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web\","
		 "\"namespace\":\"shop\",\"uid\":\"" UID "\"},\"spec\":{\"nodeName\":\"w3\","
		 "\"initContainers\":[{\"name\":\"migrate\"},{\"name\":\"agent\","
		 "\"restartPolicy\":\"Always\"}],\"containers\":[%s],\"ephemeralContainers\":"
		 "[{\"name\":\"dbg\",\"targetContainerName\":\"app\"}]},\"status\":{\"phase\":"
		 "\"Running\",\"qosClass\":\"Burstable\",\"initContainerStatuses\":[{\"name\":"
		 "\"agent\",\"containerID\":\"containerd://" ID2 "\",\"state\":{\"running\":{}}}],"
		 "\"containerStatuses\":[%s]}}", apps, statuses);
	return ctr_pod_parse(json, strlen(json), want, id, err, 300);
}

static void
test_pod(void)
{
	struct ctr_identity id;
	char err[300];
	const char *running = "{\"name\":\"app\",\"containerID\":\"containerd://" ID "\","
			      "\"state\":{\"running\":{\"startedAt\":\"2026-08-21T08:03:12Z\"}}}";

	CHECK(pod("{\"name\":\"app\"}", running, NULL, &id, err) == 0);
	CHECK(strcmp(id.name, "app") == 0 && strcmp(id.id, ID) == 0 && id.kind == CTR_K8S);
	CHECK(strcmp(id.runtime, "containerd") == 0 && strcmp(id.status, "running") == 0);
	CHECK(strcmp(id.pod_uid, UID) == 0 && strcmp(id.ns, "shop") == 0 &&
	      strcmp(id.pod, "web") == 0 && strcmp(id.node, "w3") == 0 &&
	      strcmp(id.qos, "Burstable") == 0 && strcmp(id.started_at, "2026-08-21T08:03:12Z") == 0);
	/* Two application containers: --container is needed, and picks. */
	CHECK(pod("{\"name\":\"app\"},{\"name\":\"side\"}", running, NULL, &id, err) < 0);
	CHECK(strcmp(err, "Pod shop/web has 2 application containers (app, side): pass "
		     "--container NAME") == 0);
	CHECK(pod("{\"name\":\"app\"},{\"name\":\"side\"}", running, "app", &id, err) == 0);
	CHECK(pod("{\"name\":\"app\"},{\"name\":\"side\"}", running, "side", &id, err) == 0 &&
	      strcmp(id.status, "unreported") == 0 && !id.id[0]);
	/* Init (a sidecar too) and ephemeral containers are never selected. */
	CHECK(pod("{\"name\":\"app\"}", running, "agent", &id, err) < 0 && strstr(err, "an init"));
	CHECK(pod("{\"name\":\"app\"}", running, "migrate", &id, err) < 0 && strstr(err, "an init"));
	CHECK(pod("{\"name\":\"app\"}", running, "dbg", &id, err) < 0 && strstr(err, "an ephemeral"));
	CHECK(pod("{\"name\":\"app\"}", running, "x", &id, err) < 0 &&
	      strstr(err, "no application container 'x' (it has: app)"));
	CHECK(pod("", "", NULL, &id, err) < 0 && strstr(err, "has no application container"));
	/* Waiting, and a running container with an ID that is not one. */
	CHECK(pod("{\"name\":\"app\"}", "{\"name\":\"app\",\"state\":{\"waiting\":{\"reason\":"
		  "\"ContainerCreating\"}}}", NULL, &id, err) == 0 && strcmp(id.status, "waiting") == 0);
	CHECK(pod("{\"name\":\"app\"}", "{\"name\":\"app\",\"containerID\":\"docker://abc\","
		  "\"state\":{\"running\":{}}}", NULL, &id, err) < 0 && strstr(err, "containerID"));
	const char *np = "{\"kind\":\"Status\",\"metadata\":{}}";
	CHECK(ctr_pod_parse(np, strlen(np), NULL, &id, err, sizeof(err)) < 0);
	const char *nouid = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"uid\":\"../x\"},"
			    "\"spec\":{}}";
	CHECK(ctr_pod_parse(nouid, strlen(nouid), NULL, &id, err, sizeof(err)) < 0);
}

static void
test_ids_and_cgroups(void)
{
	char rt[16], id[65], out[8][PATH_MAX];
	CHECK(ctr_split_container_id("cri-o://" ID, rt, sizeof(rt), id, sizeof(id)) == 0 &&
	      strcmp(rt, "cri-o") == 0 && strcmp(id, ID) == 0);
	CHECK(ctr_split_container_id("docker://" ID, rt, sizeof(rt), id, sizeof(id)) == 0);
	CHECK(ctr_split_container_id(ID, rt, sizeof(rt), id, sizeof(id)) < 0);
	CHECK(ctr_split_container_id("://" ID, rt, sizeof(rt), id, sizeof(id)) < 0);
	CHECK(ctr_split_container_id("containerd://" ID "0", rt, sizeof(rt), id, sizeof(id)) < 0);

	struct ctr_identity c = { .kind = CTR_K8S };
	snprintf(c.runtime, sizeof(c.runtime), "containerd");
	snprintf(c.id, sizeof(c.id), ID2);
	snprintf(c.pod_uid, sizeof(c.pod_uid), UID);
	snprintf(c.qos, sizeof(c.qos), "Burstable");
	CHECK(ctr_pod_cgroup_candidates("/sys/fs/cgroup", &c, out, 8) == 2);
	/* The reference's worked example (section 7), then the cgroupfs driver's. */
	CHECK(strcmp(out[0], "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/"
		     "kubepods-burstable-pod2c114174_6b21_45b8_b916_8ea27e912727.slice/"
		     "cri-containerd-" ID2 ".scope") == 0);
	CHECK(strcmp(out[1], "/sys/fs/cgroup/kubepods/burstable/pod" UID "/" ID2) == 0);
	snprintf(c.qos, sizeof(c.qos), "Guaranteed");
	snprintf(c.runtime, sizeof(c.runtime), "cri-o");
	CHECK(ctr_pod_cgroup_candidates("/m", &c, out, 8) == 2);
	CHECK(strcmp(out[0], "/m/kubepods.slice/kubepods-pod2c114174_6b21_45b8_b916_8ea27e912727"
		     ".slice/crio-" ID2 ".scope") == 0);
	CHECK(strcmp(out[1], "/m/kubepods/pod" UID "/crio-" ID2) == 0);
	snprintf(c.runtime, sizeof(c.runtime), "docker");
	c.qos[0] = 0; /* unknown: every class */
	CHECK(ctr_pod_cgroup_candidates("/m", &c, out, 8) == 6);
	CHECK(strcmp(out[5], "/m/kubepods/besteffort/pod" UID "/" ID2) == 0);
	CHECK(strstr(out[4], "kubepods-besteffort-pod2c114174_6b21") && strstr(out[4], "docker-"));
	CHECK(ctr_pod_cgroup_candidates("/m", &c, out, 3) == 3);
}

int
main(void)
{
	test_docker();
	test_pod();
	test_ids_and_cgroups();
	printf("container_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
