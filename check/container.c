/*
 * A --docker-container or --k8s-pod target, resolved by the code record uses
 * (collect/ctarget.h): the container's init process becomes the checked pid, and the
 * container cgroup discovery capability says which cgroup v2 directory CPU and off-CPU
 * collection would follow, or why there is none.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "report.h"

void
report_container(struct report *r)
{
	char err[320];
	if (r->csel.kind == CTR_NONE) {
		r->container.status = CAP_NOT_APPLICABLE;
		snprintf(r->container.detail, sizeof(r->container.detail), "a --pid target");
		return;
	}
	r->container.status = CAP_UNAVAILABLE;
	if (ctr_resolve(&r->csel, &r->cid, err, sizeof(err)) < 0) {
		snprintf(r->container.detail, sizeof(r->container.detail), "%s", err);
		report_msg(&r->errors, "%s", err);
		return;
	}
	r->resolved = 1;
	r->pid = r->cid.pid;
	struct stat st;
	if (!r->cid.cgroup[0] || stat(r->cid.cgroup, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(r->container.detail, sizeof(r->container.detail),
			 "no cgroup v2 directory found for the container");
		report_msg(&r->errors, "container cgroup: no cgroup v2 directory found for %s",
			   r->cid.id);
		return;
	}
	r->container.status = CAP_OK;
	snprintf(r->container.detail, sizeof(r->container.detail), "%.300s", r->cid.cgroup);
}
