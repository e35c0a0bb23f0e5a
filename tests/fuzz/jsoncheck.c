/* SPDX-License-Identifier: MIT */
/* A strict JSON checker for the harnesses whose output is JSON (the SigMF metadata of export):
 * RFC 8259 to the letter, UTF-8 checked byte by byte, no key twice in an object, and every
 * scalar handed to the caller with its path so that the harness can check what it says. Written
 * here rather than taken from a library: the point is to be stricter than the parsers that
 * forgive. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAX_DEPTH 32
#define MAX_PATH  512

struct span {
	const char *p;
	size_t n;
};

struct jc {
	const char *s;
	size_t n, i;
	int depth;
	char path[MAX_PATH];
	size_t plen;
	void (*on)(void *arg, const char *path, const char *v, size_t len);
	void *arg;
	char *why;
	size_t cap;
	bool failed;
};

static int fail(struct jc *j, const char *what)
{
	if (!j->failed)
		snprintf(j->why, j->cap, "%s at byte %zu", what, j->i);
	j->failed = true;
	return -1;
}

static void ws(struct jc *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
			       j->s[j->i] == '\r'))
		j->i++;
}

static int hex4(struct jc *j, unsigned *v)
{
	*v = 0;
	if (j->n - j->i < 4)
		return fail(j, "a short \\u escape");
	for (int k = 0; k < 4; k++) {
		char c = j->s[j->i++];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16;
		if (d == 16)
			return fail(j, "a \\u escape that is not 4 hex digits");
		*v = *v << 4 | d;
	}
	return 0;
}

/* One UTF-8 sequence of 2-4 bytes at j->i (its first byte >= 0x80). */
static int utf8(struct jc *j)
{
	const unsigned char *u = (const unsigned char *)j->s + j->i;
	size_t left = j->n - j->i;
	unsigned c = u[0], k, cp;

	if ((c & 0xe0) == 0xc0)
		k = 1, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		k = 2, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		k = 3, cp = c & 0x07;
	else
		return fail(j, "a byte that starts no UTF-8 sequence");
	if (left <= k)
		return fail(j, "a UTF-8 sequence cut short");
	for (unsigned m = 1; m <= k; m++) {
		if ((u[m] & 0xc0) != 0x80)
			return fail(j, "a UTF-8 sequence with a bad continuation byte");
		cp = cp << 6 | (u[m] & 0x3f);
	}
	if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000))
		return fail(j, "an overlong UTF-8 sequence");
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail(j, "a UTF-8 sequence that is no character");
	j->i += k + 1;
	return 0;
}

/* A string at j->i (its opening quote); *out its raw text between the quotes. */
static int string(struct jc *j, struct span *out)
{
	size_t start = ++j->i;

	for (;;) {
		unsigned char c;
		if (j->i >= j->n)
			return fail(j, "a string that does not end");
		c = (unsigned char)j->s[j->i];
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(j, "a control character inside a string");
		if (c >= 0x80) {
			if (utf8(j))
				return -1;
			continue;
		}
		j->i++;
		if (c != '\\')
			continue;
		if (j->i >= j->n)
			return fail(j, "an escape that does not end");
		c = (unsigned char)j->s[j->i++];
		if (c == 'u') {
			unsigned v, w;
			if (hex4(j, &v))
				return -1;
			if (v >= 0xdc00 && v <= 0xdfff)
				return fail(j, "a low surrogate escape without its high one");
			if (v >= 0xd800 && v <= 0xdbff) {
				if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
					return fail(j,
						    "a high surrogate escape without its low one");
				j->i += 2;
				if (hex4(j, &w))
					return -1;
				if (w < 0xdc00 || w > 0xdfff)
					return fail(j,
						    "a high surrogate escape without its low one");
			}
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return fail(j, "an unknown escape");
		}
	}
	out->p = j->s + start;
	out->n = j->i - start;
	j->i++;
	return 0;
}

static bool digit(struct jc *j)
{
	return j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9';
}

static int number(struct jc *j)
{
	if (j->s[j->i] == '-')
		j->i++;
	if (!digit(j))
		return fail(j, "a number without digits");
	if (j->s[j->i] == '0')
		j->i++;
	else
		while (digit(j))
			j->i++;
	if (j->i < j->n && j->s[j->i] == '.') {
		j->i++;
		if (!digit(j))
			return fail(j, "a fraction without digits");
		while (digit(j))
			j->i++;
	}
	if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		if (!digit(j))
			return fail(j, "an exponent without digits");
		while (digit(j))
			j->i++;
	}
	return 0;
}

static int word(struct jc *j, const char *w)
{
	size_t k = strlen(w);
	if (j->n - j->i < k || memcmp(j->s + j->i, w, k))
		return fail(j, "an unknown word");
	j->i += k;
	return 0;
}

static int value(struct jc *j);

/* The path of the value about to be read: the parent's path and ".key" or "[index]". */
static size_t push(struct jc *j, const struct span *key, unsigned long idx)
{
	size_t keep = j->plen, room = sizeof(j->path) - j->plen;
	int n = key ? snprintf(j->path + j->plen, room, "%s%.*s", j->plen ? "." : "", (int)key->n,
			       key->p)
		    : snprintf(j->path + j->plen, room, "[%lu]", idx);
	if (n > 0 && (size_t)n < room)
		j->plen += (size_t)n;
	else
		j->path[j->plen] = 0; /* too deep to name: the parent's path */
	return keep;
}

static void pop(struct jc *j, size_t keep)
{
	j->plen = keep;
	j->path[keep] = 0;
}

static int by_text(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(x->p, y->p, x->n);
}

static int object(struct jc *j)
{
	struct span *keys = NULL;
	size_t nkeys = 0, capk = 0;
	int rc = -1;

	j->i++;
	ws(j);
	if (j->i < j->n && j->s[j->i] == '}') {
		j->i++;
		return 0;
	}
	for (;;) {
		struct span k;
		ws(j);
		if (j->i >= j->n || j->s[j->i] != '"') {
			fail(j, "an object member without a string key");
			goto out;
		}
		if (string(j, &k))
			goto out;
		if (nkeys == capk) {
			struct span *m = realloc(keys, (capk = capk ? capk * 2 : 16) * sizeof(*m));
			if (!m) {
				fail(j, "out of memory");
				goto out;
			}
			keys = m;
		}
		keys[nkeys++] = k;
		ws(j);
		if (j->i >= j->n || j->s[j->i] != ':') {
			fail(j, "a key without its colon");
			goto out;
		}
		j->i++;
		size_t keep = push(j, &k, 0);
		int r = value(j);
		pop(j, keep);
		if (r)
			goto out;
		ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->s[j->i] == '}') {
			j->i++;
			break;
		}
		fail(j, "an object member followed by neither ',' nor '}'");
		goto out;
	}
	qsort(keys, nkeys, sizeof(*keys), by_text);
	for (size_t a = 1; a < nkeys; a++)
		if (!by_text(&keys[a - 1], &keys[a])) {
			char m[120];
			snprintf(m, sizeof(m), "the key \"%.*s\" twice in one object",
				 (int)(keys[a].n < 60 ? keys[a].n : 60), keys[a].p);
			fail(j, m);
			goto out;
		}
	rc = 0;
out:
	free(keys);
	return rc;
}

static int array(struct jc *j)
{
	unsigned long idx = 0;

	j->i++;
	ws(j);
	if (j->i < j->n && j->s[j->i] == ']') {
		j->i++;
		return 0;
	}
	for (;; idx++) {
		size_t keep = push(j, NULL, idx);
		int r = value(j);
		pop(j, keep);
		if (r)
			return -1;
		ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->s[j->i] == ']') {
			j->i++;
			return 0;
		}
		return fail(j, "an array element followed by neither ',' nor ']'");
	}
}

static int value(struct jc *j)
{
	size_t start;
	int rc;

	ws(j);
	if (j->i >= j->n)
		return fail(j, "a value missing");
	start = j->i;
	switch (j->s[j->i]) {
	case '{':
	case '[':
		if (++j->depth > MAX_DEPTH)
			return fail(j, "nesting too deep");
		rc = j->s[j->i] == '{' ? object(j) : array(j);
		j->depth--;
		return rc;
	case '"': {
		struct span v;
		rc = string(j, &v);
		break;
	}
	case 't':
		rc = word(j, "true");
		break;
	case 'f':
		rc = word(j, "false");
		break;
	case 'n':
		rc = word(j, "null");
		break;
	default:
		rc = number(j);
	}
	if (!rc && j->on)
		j->on(j->arg, j->path, j->s + start, j->i - start);
	return rc;
}

int fuzz_json_check(const char *s, size_t n,
		    void (*on_scalar)(void *arg, const char *path, const char *v, size_t len),
		    void *arg, char *why, size_t cap)
{
	struct jc j = {.s = s, .n = n, .on = on_scalar, .arg = arg, .why = why, .cap = cap};

	if (value(&j))
		return -1;
	ws(&j);
	if (j.i != n)
		return fail(&j, "text after the value");
	return 0;
}
