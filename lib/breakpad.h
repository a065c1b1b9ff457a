/*
 * The Firefox Profiler's identity of a library: the 33-character breakpad id derived from a
 * GNU build id (../shared/reference/firefox-processed-profile.md, "libs").  emit-firefox
 * writes it and serve matches requests against it, so both use this one rule.
 */
#ifndef RP_BREAKPAD_H
#define RP_BREAKPAD_H

/* hex: the build id in hex (at most its first 16 bytes count).  out: 32 upper-case hex
 * digits and the age "0"; empty when hex is empty or not hex. */
void breakpad_id(const char *hex, char out[34]);

#endif
