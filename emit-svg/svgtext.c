#include "svg.h"

#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid XML text. */
static size_t
utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return c >= 0x20 || c == '\t' ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF and XML's two non-characters. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

static size_t
count_chars(const unsigned char *s, size_t len)
{
	size_t i = 0, n = 0, k;

	while (i < len) {
		k = utf8_len(s + i, len - i);
		i += k ? k : 1;
		n++;
	}
	return n;
}

void
svg_text(struct bufout *out, const char *str, size_t len, size_t maxchars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n = 0, k, keep = maxchars;
	int cut = count_chars(s, len) > maxchars;

	if (cut)
		keep = maxchars >= 2 ? maxchars - 2 : 0;
	while (i < len && n < keep) {
		k = utf8_len(s + i, len - i);
		switch (k ? s[i] : 0) {
		case '<':
			bufout_put(out, "&lt;", 4);
			break;
		case '>':
			bufout_put(out, "&gt;", 4);
			break;
		case '&':
			bufout_put(out, "&amp;", 5);
			break;
		case '"':
			bufout_put(out, "&quot;", 6);
			break;
		case 0:
			bufout_put(out, "?", 1);
			break;
		default:
			bufout_put(out, s + i, k);
		}
		i += k ? k : 1;
		n++;
	}
	if (cut)
		bufout_put(out, "..", maxchars >= 2 ? 2 : maxchars);
}
