/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen-tidy: lays out the C that tools/gen-ops.c writes, stdin to stdout, as the hand-written
 * headers are: one statement per line and no line wider than 100 columns (a tab is 8).
 *  - "a = x, b.c = y;" (assignments chained by commas) becomes one assignment a line;
 *  - a wider line breaks after the last ", " inside parentheses that keeps it within 100
 *    columns, the rest aligned under the opening parenthesis (or one tab deeper when that is far
 *    right); a string literal that still crosses the limit is cut into two literals at a space;
 *    a one-line comment that does becomes a block comment.
 * An operand list of " | " that does not fit either breaks after the last "|" that does.
 * It changes layout only: the tokens and their order stay (make gen; check-gen compares).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 100
#define MAXLINE 8192

static bool in_macro;	/* the line continues a #define: a break needs a backslash too */

/* Visual width of s[0..n), tabs to the next multiple of 8 from col. */
static int cols(const char *s, size_t n, int col)
{
	for (size_t i = 0; i < n; i++)
		col = s[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
	return col;
}

/* The leading tabs and spaces of s. */
static size_t indent_len(const char *s)
{
	size_t i = 0;

	while (s[i] == '\t' || s[i] == ' ')
		i++;
	return i;
}

/* Per byte of s: the parenthesis depth before it, and whether it is inside a string, char or comment. */
struct scan {
	int depth[MAXLINE];
	bool quoted[MAXLINE];
	int open_at[MAXLINE];	/* the byte of the innermost open parenthesis, -1 at depth 0 */
};

static void scan_line(const char *s, struct scan *sc)
{
	int depth = 0, stack[256], top = 0;
	char q = 0;
	bool comment = false;

	for (size_t i = 0; s[i]; i++) {
		sc->depth[i] = depth;
		sc->open_at[i] = top ? stack[top - 1] : -1;
		sc->quoted[i] = q || comment;
		if (comment) {
			if (s[i] == '*' && s[i + 1] == '/')
				comment = false, sc->quoted[i + 1] = true, i++;
		} else if (q) {
			if (s[i] == '\\' && s[i + 1])
				sc->quoted[i + 1] = true, sc->depth[i + 1] = depth, i++;
			else if (s[i] == q)
				q = 0;
		} else if (s[i] == '"' || s[i] == '\'') {
			q = s[i];
		} else if (s[i] == '/' && s[i + 1] == '*') {
			comment = true, sc->quoted[i] = true;
		} else if (s[i] == '(' || s[i] == '[' || s[i] == '{') {
			if (top < 256)
				stack[top++] = (int)i;
			depth++;
		} else if ((s[i] == ')' || s[i] == ']' || s[i] == '}') && depth > 0) {
			depth--;
			top -= top > 0;
		}
	}
}

/* Whether s (from its start) is "lvalue = ", an lvalue being a name with ., -> and [...]. */
static bool is_assignment(const char *s)
{
	size_t i = 0;

	if (!isalpha((unsigned char)s[i]) && s[i] != '_')
		return false;
	for (;;) {
		while (isalnum((unsigned char)s[i]) || s[i] == '_')
			i++;
		if (s[i] == '.')
			i++;
		else if (s[i] == '-' && s[i + 1] == '>')
			i += 2;
		else if (s[i] == '[') {
			while (s[i] && s[i] != ']')
				i++;
			if (!s[i])
				return false;
			i++;
			if (s[i] != '.' && !(s[i] == '-' && s[i + 1] == '>') && s[i] != ' ')
				return false;
			if (s[i] == ' ')
				break;
			i += s[i] == '.' ? 1 : 2;
		} else
			break;
		if (!isalpha((unsigned char)s[i]) && s[i] != '_' && s[i] != ' ')
			return false;
		if (s[i] == ' ')
			break;
	}
	return s[i] == ' ' && s[i + 1] == '=' && s[i + 2] == ' ';
}

static void emit_at(const char *s, int cont);

static void emit(const char *s)
{
	emit_at(s, -1);
}

/* "a = x, b = y;" at the top level: one assignment a line. Returns whether it split s. */
static bool split_chain(const char *s)
{
	static struct scan sc;
	size_t ind = indent_len(s), n = strlen(s), cuts[64], nc = 0;
	const char *semi;

	if (!ind || !is_assignment(s + ind))
		return false;
	scan_line(s, &sc);
	semi = NULL;
	for (size_t i = ind; i < n; i++) {
		if (sc.quoted[i] || sc.depth[i])
			continue;
		if (s[i] == ';') {
			semi = s + i;
			break;
		}
		if (s[i] == ',' && s[i + 1] == ' ') {
			if (!is_assignment(s + i + 2) || nc == 64)
				return false;
			cuts[nc++] = i;
		}
	}
	if (!nc || !semi)
		return false;
	char buf[MAXLINE];
	size_t from = ind;

	for (size_t k = 0; k <= nc; k++) {
		size_t to = k < nc ? cuts[k] : (size_t)(semi - s);
		int len = snprintf(buf, sizeof(buf), "%.*s%.*s;%s", (int)ind, s, (int)(to - from), s + from,
				   k < nc ? "" : semi + 1);

		if (len < 0 || (size_t)len >= sizeof(buf))
			exit(1);
		emit(buf);
		from = to + 2;
	}
	return true;
}

/* The indentation that aligns a column: tabs, then spaces. */
static void put_indent(char *out, int col)
{
	size_t k = 0;

	for (; col >= 8; col -= 8)
		out[k++] = '\t';
	for (; col > 0; col--)
		out[k++] = ' ';
	out[k] = 0;
}

/*
 * A line wider than WIDTH: broken after a ", " inside parentheses, or inside a string literal.
 * cont >= 0: s continues a parenthesis opened on a line before, its pieces aligned at cont.
 */
static bool wrap(const char *s, int cont)
{
	static struct scan sc;
	size_t n = strlen(s), best = 0;
	bool macro = in_macro || (n > 1 && s[n - 1] == '\\');
	char head[MAXLINE], rest[MAXLINE], ind[256];
	int align;

	scan_line(s, &sc);
	for (size_t i = indent_len(s); i + 1 < n; i++)
		if (s[i] == ',' && s[i + 1] == ' ' && !sc.quoted[i] && (sc.depth[i] > 0 || cont >= 0) &&
		    cols(s, i + 1, 0) + (macro ? 2 : 0) <= WIDTH)
			best = i;
	if (best) {
		align = sc.open_at[best] >= 0 ? cols(s, (size_t)sc.open_at[best] + 1, 0) : cont;
		if (align > 64 && sc.open_at[best] >= 0)
			align = cols(s, indent_len(s), 0) + 8;
		put_indent(ind, align);
		snprintf(head, sizeof(head), "%.*s%s", (int)(best + 1), s, macro ? " \\" : "");
		snprintf(rest, sizeof(rest), "%s%s", ind, s + best + 2);
		emit(head);
		emit_at(rest, align);
		return true;
	}
	/* a long operand list: after the last " | " that fits, the rest aligned with this line */
	for (size_t i = n; i-- > indent_len(s) + 1;) {
		if (sc.quoted[i] || s[i] != '|' || s[i - 1] != ' ' || s[i + 1] != ' ' ||
		    cols(s, i + 1, 0) + (macro ? 2 : 0) > WIDTH)
			continue;
		align = cont >= 0 ? cont : cols(s, indent_len(s), 0) + 8;
		put_indent(ind, align);
		snprintf(head, sizeof(head), "%.*s%s", (int)(i + 1), s, macro ? " \\" : "");
		snprintf(rest, sizeof(rest), "%s%s", ind, s + i + 2);
		emit(head);
		emit_at(rest, cont);
		return true;
	}
	/* a string literal that crosses the limit: cut at its last space before it */
	for (size_t i = n; i-- > indent_len(s);) {
		if (!sc.quoted[i] || s[i] != ' ' || cols(s, i + 2, 0) > WIDTH - 1)
			continue;
		size_t q = i;

		while (q > 0 && !(s[q] == '"' && !sc.quoted[q]))
			q--;
		if (s[q] != '"')
			break;
		align = cols(s, q, 0);
		put_indent(ind, align > 64 ? cols(s, indent_len(s), 0) + 8 : align);
		snprintf(head, sizeof(head), "%.*s\"%s", (int)(i + 1), s, macro ? " \\" : "");
		snprintf(rest, sizeof(rest), "%s\"%s", ind, s + i + 1);
		emit(head);
		emit(rest);
		return true;
	}
	return false;
}

/* A one-line comment wider than WIDTH, as a block comment. */
static bool wrap_comment(const char *s)
{
	size_t ind = indent_len(s), n = strlen(s);
	char line[MAXLINE];

	if (strncmp(s + ind, "/* ", 3) || n < 3 || strcmp(s + n - 3, " */"))
		return false;
	printf("%.*s/*\n", (int)ind, s);
	const char *w = s + ind + 3, *end = s + n - 3;

	while (w < end) {
		size_t k = (size_t)snprintf(line, sizeof(line), "%.*s * ", (int)ind, s);
		const char *last = NULL;

		for (const char *p = w; p <= end; p++)
			if ((p == end || *p == ' ') && cols(line, k, 0) + (p - w) <= WIDTH)
				last = p;
		if (!last)
			last = end;
		printf("%s%.*s\n", line, (int)(last - w), w);
		w = last + (last < end);
	}
	printf("%.*s */\n", (int)ind, s);
	return true;
}

static void emit_at(const char *s, int cont)
{
	if (cont < 0 && split_chain(s))
		return;
	if (cols(s, strlen(s), 0) > WIDTH && (wrap(s, cont) || wrap_comment(s)))
		return;
	puts(s);
}

/* The depth of parentheses and brackets (not braces) at the end of s, from depth. */
static int depth_after(const char *s, int depth)
{
	char q = 0;
	bool comment = false;

	for (size_t i = 0; s[i]; i++) {
		if (comment) {
			if (s[i] == '*' && s[i + 1] == '/')
				comment = false, i++;
		} else if (q) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			else if (s[i] == q)
				q = 0;
		} else if (s[i] == '"' || s[i] == '\'') {
			q = s[i];
		} else if (s[i] == '/' && s[i + 1] == '*') {
			comment = true, i++;
		} else if (s[i] == '(' || s[i] == '[') {
			depth++;
		} else if ((s[i] == ')' || s[i] == ']') && depth > 0) {
			depth--;
		}
	}
	return depth;
}

int main(void)
{
	char line[MAXLINE];
	int carry = 0;	/* parentheses a line before left open: this line continues them */

	while (fgets(line, sizeof(line), stdin)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		else if (n == sizeof(line) - 1) {
			fprintf(stderr, "gen-tidy: a line longer than %d bytes\n", MAXLINE - 2);
			return 1;
		}
		emit_at(line, carry > 0 ? cols(line, indent_len(line), 0) : -1);
		carry = depth_after(line, carry);
		in_macro = n > 0 && line[n - 1] == '\\';
	}
	return ferror(stdin) ? 1 : 0;
}
