/* sanitizer: whether this build runs under AddressSanitizer or LeakSanitizer.
 *
 * RP_SANITIZER is defined in such a build.  RP_FREE_AT_EXIT is 1 there and 0 otherwise: a
 * stage that ends frees what it built only where a leak checker reads the heap at exit;
 * elsewhere the kernel takes the whole address space back at once, and walking big trees
 * to free them one node at a time is pure cost (libdw's units of a libc debug file: about a
 * tenth of a short replay's instructions in unwind). */
#ifndef RP_SANITIZER_H
#define RP_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define RP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define RP_SANITIZER 1
#endif
#endif

#ifdef RP_SANITIZER
#define RP_FREE_AT_EXIT 1
#else
#define RP_FREE_AT_EXIT 0
#endif

#endif
