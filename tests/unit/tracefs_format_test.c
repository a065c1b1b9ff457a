/*
 * collect's reader of tracefs format files (tracefs.h): the offset of a field, by its name
 * alone, in the formats of sched_process_exit as older and newer kernels print them.
 */
#include <stdio.h>

#include "../../collect/tracefs.h"

#include "check.h"

/* Linux 6.18: group_dead at the end. */
static const char *newer =
	"name: sched_process_exit\n"
	"ID: 322\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:bool group_dead;\toffset:32;\tsize:1;\tsigned:0;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d group_dead=%s\", REC->comm, REC->pid\n";

/* Linux 6.1: no group_dead (the print format names it nowhere either). */
static const char *older =
	"name: sched_process_exit\n"
	"ID: 301\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio\n";

int
main(void)
{
	CHECK(tracefs_format_offset(newer, "group_dead") == 32);
	CHECK(tracefs_format_offset(newer, "pid") == 24);
	CHECK(tracefs_format_offset(newer, "comm") == 8);
	CHECK(tracefs_format_offset(newer, "common_pid") == 4);
	CHECK(tracefs_format_offset(older, "group_dead") == -1);
	CHECK(tracefs_format_offset(older, "prio") == 28);
	/* A name that only ends or starts like a field is not it. */
	CHECK(tracefs_format_offset(newer, "dead") == -1);
	CHECK(tracefs_format_offset(newer, "group_dea") == -1);
	CHECK(tracefs_format_offset(newer, "common") == -1);
	/* Damaged text: no offset, an offset without digits, an absurd one, nothing. */
	CHECK(tracefs_format_offset("\tfield:bool group_dead;\tsize:1;\n", "group_dead") == -1);
	CHECK(tracefs_format_offset("\tfield:bool group_dead;\toffset:;\n", "group_dead") == -1);
	CHECK(tracefs_format_offset("\tfield:bool group_dead;\toffset:99999999999;\n",
				    "group_dead") == -1);
	CHECK(tracefs_format_offset("field:;", "group_dead") == -1);
	CHECK(tracefs_format_offset("", "group_dead") == -1);
	/* The running kernel's own file, when tracefs is there: an offset past the header. */
	int live = tracefs_event_field_offset("sched/sched_process_exit", "pid");
	CHECK(live == -1 || live == 24);
	CHECK(tracefs_event_field_offset("no/such_event", "pid") == -1);
	CHECK(tracefs_event_field_offset("../../../../etc/passwd_is_not_an_event", "x") == -1);
	printf("tracefs_format: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
