/* test_labels_tidy.c -- unit tests for labels__tidy: a set as BPF stored it, made one to use */
#include <string.h>
#include "labels.h"
#include "runtimes/labels/labels_runtime.h"
#include "test.h"

static void put(struct label_set *s, const char *key, const char *value)
{
	struct label_kv *kv = &s->kv[s->n++];

	memset(kv, 0, sizeof(*kv));
	strcpy(kv->key, key);
	strcpy(kv->value, value);
}

/* of two labels with one key the first is the label (custom-labels v1); the others keep their order */
static int test_first_of_a_key(void)
{
	struct label_set s = { 0 };

	put(&s, "trace_id", "t1");
	put(&s, "span_id", "s1");
	put(&s, "span_id", "not-this-one");
	put(&s, "route", "/a");
	put(&s, "trace_id", "t2");
	labels__tidy(&s);
	CHECK(s.n == 3);
	CHECK(!strcmp(s.kv[0].key, "trace_id") && !strcmp(s.kv[0].value, "t1"));
	CHECK(!strcmp(s.kv[1].key, "span_id") && !strcmp(s.kv[1].value, "s1"));
	CHECK(!strcmp(s.kv[2].key, "route") && !strcmp(s.kv[2].value, "/a"));
	return TEST_OK;
}

/* a count past LABELS_MAX and strings without their NUL, as a corrupt map entry could hold */
static int test_bounded(void)
{
	struct label_set s;

	memset(&s, 'x', sizeof(s));
	s.n = 1000;
	labels__tidy(&s);
	CHECK(s.n == 1);	/* eight labels, all with one key: "xxx..." */
	CHECK(strlen(s.kv[0].key) == LABEL_KEY_MAX - 1 && strlen(s.kv[0].value) == LABEL_VALUE_MAX - 1);
	return TEST_OK;
}

TEST_MAIN("labels_tidy", { "first_of_a_key", test_first_of_a_key }, { "bounded", test_bounded });
