/*
 * The defaults of the settings that more than one place shows, each defined here once: the
 * stages take their defaults and the defaults in their --help from these, the driver reads
 * them from defaults.sh, which the build writes from this file (every line
 * "#define RP_DEFAULT_NAME VALUE" becomes RP_DEFAULT_NAME=VALUE), and tests/defaults.bats
 * checks the README's option table and the driver's --help against them.  The option of
 * RP_DEFAULT_NAME is --name, lower case with '-' for '_'.  Values are written as a user
 * writes them: numbers, durations as strings (parse_duration), words as strings.
 */
#ifndef RP_DEFAULTS_H
#define RP_DEFAULTS_H

#include <stdint.h>

/* The driver's record/launch (manual); collect alone records until the end. */
#define RP_DEFAULT_DURATION "60s"
/* The recording's window length: collect writes it in every target frame, and aggregate
 * cuts its windows by it (this default only for a stream that records none). */
#define RP_DEFAULT_WINDOW "60s"
#define RP_DEFAULT_OUTPUT "."                   /* the driver's output directory */
/* collect */
#define RP_DEFAULT_PROFILES "cpu,heap"
#define RP_DEFAULT_ALLOC_INTERVAL "512KiB"
#define RP_DEFAULT_ALLOCATOR "auto"
#define RP_DEFAULT_OFFCPU_PHASE "blocked"
#define RP_DEFAULT_OFFCPU_MIN_DURATION_US 0
#define RP_DEFAULT_OFFCPU_RING_BUFFER 4194304
#define RP_DEFAULT_OFFCPU_PROBABILITY 100
#define RP_DEFAULT_PHYSICAL_MEMORY_PROBABILITY 100
#define RP_DEFAULT_UNWIND "auto"
#define RP_DEFAULT_CPU_FREQUENCY 49
#define RP_DEFAULT_MAX_MODULE_CACHE 1073741824
/* unwind, serve: what the debug cache (inflated debug files by build id) may hold */
#define RP_DEFAULT_MAX_DEBUG_CACHE 1073741824
#define RP_DEFAULT_MAX_THREADS 1024
/* aggregate */
#define RP_DEFAULT_MAX_STACKS 65536
#define RP_DEFAULT_MAX_PENDING_EVENTS 262144
#define RP_DEFAULT_EVENT_REORDER_WINDOW "100ms"
/* commit */
#define RP_DEFAULT_KEEP_WINDOWS 60
/* emit-firefox */
#define RP_DEFAULT_MAX_TIMELINE_SAMPLES 65536
/* fanout */
#define RP_DEFAULT_COMPLETION_BUDGET "30s"
/* emit-otlp (environment values of the timeout are milliseconds: emit-otlp/config.c) */
#define RP_DEFAULT_OTLP_TIMEOUT "10s"
#define RP_DEFAULT_OTLP_COMPRESSION "gzip"
/* import */
#define RP_DEFAULT_FORMAT "auto"

/* A number default as the text --help shows. */
#define RP_DEFAULT_TEXT(v) RP_DEFAULT_TEXT_(v)
#define RP_DEFAULT_TEXT_(v) #v

/* A duration default in nanoseconds; one that does not parse is a bug of this file, and
 * exits with one line (tests/unit/defaults_test.c parses every one). */
uint64_t rp_default_ns(const char *duration);

#endif
