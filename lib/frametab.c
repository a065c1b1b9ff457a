/*
 * Frame names and whole-frame validation, table driven so that a new frame type is one row.
 * tests/stream-spec.bats checks that every type listed here has a section in
 * docs/stream-format.md.
 */
#include "stream.h"

#include <stdio.h>

static const char *const names[] = {
	[FR_TARGET] = "target",
	[FR_MMAP] = "mmap",
	[FR_COMM] = "comm",
	[FR_FORK] = "fork",
	[FR_EXIT] = "exit",
	[FR_SAMPLE] = "sample",
	[FR_LOST] = "lost",
	[FR_KSYM] = "ksym",
	[FR_ROUND] = "round",
	[FR_TARGET_EXIT] = "target-exit",
	[FR_END] = "end",
	[FR_WARNING] = "warning",
	[FR_USYM] = "usym",
	[FR_SAMPLE_REGS] = "sample-regs",
	[FR_OFFCPU] = "offcpu",
	[FR_MAPPING] = "mapping",
	[FR_FUNCTION] = "function",
	[FR_LOCATION] = "location",
	[FR_STACK] = "stack",
	[FR_OFFCPU_STACK] = "offcpu-stack",
	[FR_WINDOW_START] = "window-start",
	[FR_WINDOW_STACK] = "window-stack",
	[FR_WINDOW_END] = "window-end",
	[FR_WINDOW_OFFCPU_STACK] = "window-offcpu-stack",
	[FR_FORGET] = "forget",
	[FR_FILE] = "file",
	[FR_MODULES] = "modules",
};

const char *
stream_frame_name(uint32_t type)
{
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}

/* One buffer big enough for any decoded frame, so a check needs no allocation. */
union any_frame {
	struct fr_target target;
	struct fr_mmap mmap;
	struct fr_comm comm;
	struct fr_task task;
	struct fr_sample sample;
	struct fr_lost lost;
	struct fr_ksym ksym;
	struct fr_round round;
	struct fr_target_exit target_exit;
	struct fr_end end;
	struct fr_warning warning;
	struct fr_usym usym;
	struct fr_sample_regs sample_regs;
	struct fr_mapping mapping;
	struct fr_function function;
	struct fr_location location;
	struct fr_stack stack;
	struct fr_window_start window_start;
	struct fr_window_stack window_stack;
	struct fr_window_end window_end;
	struct fr_file file;
	struct fr_forget forget;
	struct fr_modules modules;
	struct fr_offcpu offcpu;
	struct fr_offcpu_stack offcpu_stack;
};

int
stream_check_frame(const struct frame *f, char *err, size_t errlen)
{
	union any_frame u;

	switch (f->type) {
	case FR_TARGET: return stream_get_target(f, &u.target, err, errlen);
	case FR_MMAP: return stream_get_mmap(f, &u.mmap, err, errlen);
	case FR_COMM: return stream_get_comm(f, &u.comm, err, errlen);
	case FR_FORK:
	case FR_EXIT: return stream_get_task(f, &u.task, err, errlen);
	case FR_SAMPLE: return stream_get_sample(f, &u.sample, err, errlen);
	case FR_LOST: return stream_get_lost(f, &u.lost, err, errlen);
	case FR_KSYM: return stream_get_ksym(f, &u.ksym, err, errlen);
	case FR_ROUND: return stream_get_round(f, &u.round, err, errlen);
	case FR_TARGET_EXIT: return stream_get_target_exit(f, &u.target_exit, err, errlen);
	case FR_END: return stream_get_end(f, &u.end, err, errlen);
	case FR_WARNING: return stream_get_warning(f, &u.warning, err, errlen);
	case FR_USYM: return stream_get_usym(f, &u.usym, err, errlen);
	case FR_SAMPLE_REGS: return stream_get_sample_regs(f, &u.sample_regs, err, errlen);
	case FR_MAPPING: return stream_get_mapping(f, &u.mapping, err, errlen);
	case FR_FUNCTION: return stream_get_function(f, &u.function, err, errlen);
	case FR_LOCATION: return stream_get_location(f, &u.location, err, errlen);
	case FR_STACK: return stream_get_stack(f, &u.stack, err, errlen);
	case FR_WINDOW_START: return stream_get_window_start(f, &u.window_start, err, errlen);
	case FR_WINDOW_STACK: return stream_get_window_stack(f, &u.window_stack, err, errlen);
	case FR_WINDOW_END: return stream_get_window_end(f, &u.window_end, err, errlen);
	case FR_FILE: return stream_get_file(f, &u.file, err, errlen);
	case FR_FORGET: return stream_get_forget(f, &u.forget, err, errlen);
	case FR_MODULES: return stream_get_modules(f, &u.modules, err, errlen);
	case FR_OFFCPU: return stream_get_offcpu(f, &u.offcpu, err, errlen);
	case FR_OFFCPU_STACK: return stream_get_offcpu_stack(f, &u.offcpu_stack, err, errlen);
	case FR_WINDOW_OFFCPU_STACK:
		return stream_get_window_offcpu_stack(f, &u.window_stack, err, errlen);
	default: return 0;
	}
}
