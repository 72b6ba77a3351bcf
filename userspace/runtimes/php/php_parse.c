/* php_parse.c -- the Zend VM's layouts by version, and the parsers of its memory: version string, function names */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "php_int.h"

#define STR_MAX 512		/* bytes of a name or file kept: longer ones are cut */
#define VERSION_PREFIX "X-Powered-By: PHP/"

/*
 * Offsets from each version's own headers (php8.2-dev, php8.4-dev:
 * offsetof over zend_globals.h, zend_compile.h, zend_types.h), checked
 * against live processes by tests/unit/runtimes/test_php.c. Only
 * zend_op_array moved between them: 8.4's property hooks.
 */
#define EX_COMMON .ex_opline = 0, .ex_func = 3, .ex_info = 5, .ex_prev = 6, .zop_lineno = 24, .zop_size = 32
static const struct php_layout layouts[] = {
	{ .version = 802, .eg_current = 488, .fn_name = 8, .fn_scope = 16, .ce_name = 8, .str_len = 16,
	  .str_val = 24, .bpf = { EX_COMMON, .op_last = 80, .op_filename = 152 } },
	{ .version = 804, .eg_current = 488, .fn_name = 8, .fn_scope = 16, .ce_name = 8, .str_len = 16,
	  .str_val = 24, .bpf = { EX_COMMON, .op_last = 96, .op_filename = 168 } },
};

const struct php_layout *php_layout__find(__u32 version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

/* a decimal number of at most 3 digits at s[0, len), or -1 */
static int small_number(const char *s, size_t len, size_t *used)
{
	int v = 0;
	size_t i;

	for (i = 0; i < len && i < 3 && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	*used = i;
	return i ? v : -1;
}

__u32 php_version__parse(const char *buf, size_t len)
{
	const size_t plen = sizeof(VERSION_PREFIX) - 1;
	const char *at = len >= plen ? memmem(buf, len, VERSION_PREFIX, plen) : NULL;
	size_t left, used;
	int major, minor;

	if (!at)
		return 0;
	at += plen;
	left = len - (size_t)(at - buf);
	major = small_number(at, left, &used);
	if (major < 0 || used == left || at[used] != '.')
		return 0;
	at += used + 1;
	left -= used + 1;
	minor = small_number(at, left, &used);
	if (minor < 0 || minor > 99)
		return 0;
	return (__u32)major * 100 + (__u32)minor;
}

/* The zend_string at STR, cut to STR_MAX bytes, as valid UTF-8: malloc'ed, or NULL. */
static char *read_string(const struct php_mem *m, __u64 str)
{
	char raw[STR_MAX], out[3 * STR_MAX + 1];
	__u64 len;

	if (!str || m->read(m->ctx, str + m->l->str_len, &len, sizeof(len)))
		return NULL;
	if (len > STR_MAX)
		len = STR_MAX;	/* never trusted: what we read is bounded by our buffer */
	if (len && m->read(m->ctx, str + m->l->str_val, raw, len))
		return NULL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)raw[i] < 0x20)
			raw[i] = '?';	/* a control character in a name: shown, not passed on */
	utf8__sanitize(raw, len, out, sizeof(out));
	return strdup(out);
}

void php_func_info__free(struct php_func_info *f)
{
	free(f->name);
	free(f->file);
	f->name = f->file = NULL;
}

/* "Class::name", or name alone without a class */
static char *join_name(const char *class, const char *name)
{
	size_t n = (class ? strlen(class) + 2 : 0) + strlen(name) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", class ? class : "", class ? "::" : "", name);
	return s;
}

int php_func__read(const struct php_mem *m, __u64 func, __u32 tag, struct php_func_info *out)
{
	const struct php_layout *l = m->l;
	__u64 name_p = 0, scope = 0, class_p = 0, tail[2] = { 0, 0 };
	char *name = NULL, *class = NULL;
	__u8 type;
	int err = -EFAULT;

	memset(out, 0, sizeof(*out));
	if (m->read(m->ctx, func, &type, 1) || m->read(m->ctx, func + l->fn_name, &name_p, 8) ||
	    m->read(m->ctx, func + l->fn_scope, &scope, 8))
		goto out;
	if (type != PHP_INTERNAL_FUNCTION && !php_user_code(type))
		goto out;	/* not a function type we know */
	out->internal = type == PHP_INTERNAL_FUNCTION;
	if (!out->internal && m->read(m->ctx, func + l->bpf.op_filename, tail, sizeof(tail)))
		goto out;
	err = -ESTALE;
	if (php_func_tag(name_p, tail[0], (__u32)tail[1]) != tag)
		goto out;	/* another function is there now: never named as this one */
	err = -EFAULT;
	/* code outside functions: a file's top code, or eval()'d code (php -r's too) */
	name = name_p ? read_string(m, name_p) : strdup(type == PHP_EVAL_CODE ? "{eval}" : "{main}");
	if (!name)
		goto out;
	if (scope && !m->read(m->ctx, scope + l->ce_name, &class_p, 8))
		class = read_string(m, class_p);
	out->name = join_name(class, name);
	out->line_start = (__u32)tail[1];
	if (!out->internal)
		out->file = read_string(m, tail[0]);
	err = out->name && (out->internal || out->file) ? 0 : -EFAULT;
out:
	free(name);
	free(class);
	if (err)
		php_func_info__free(out);
	return err;
}
