/* php.h -- what userspace tells the BPF Zend VM frame reader (bpf/php.bpf.h) about one PHP process */
#ifndef EBPFPROF_PHP_H
#define EBPFPROF_PHP_H

#include "frametypes.h"

/*
 * How the Zend VM keeps its frames: executor_globals.current_execute_data
 * is the innermost zend_execute_data, each links to its caller by
 * prev_execute_data. A PHP function calling a PHP function stays in the
 * same execute_ex call; execute_ex is entered anew (zend_call_function,
 * zend_execute) for a callback, the main script, an include's top code.
 * The frame such a call starts with has ZEND_CALL_TOP in its call info:
 * one execute_ex call owns the frames from the current one out to that.
 * An internal function (strlen, array_map) has a frame too, pushed before
 * its C handler runs: it comes out in order between the PHP frames.
 */

/* PHP frames one execute_ex call may own (recursion stays in one call) before the rest is marked lost */
#ifndef PHP_MAX_RUN
#define PHP_MAX_RUN 64
#endif

#define PHP_EX_WORDS 8		/* words of a zend_execute_data read at once, from its start */
#define PHP_CALL_TOP (1u << 17)	/* ZEND_CALL_TOP in the call info (Z_TYPE_INFO(This)), 8.0 to 8.4 */
#define PHP_INTERNAL_FUNCTION 1	/* zend_function.type: ZEND_INTERNAL_FUNCTION, a C handler */
#define PHP_USER_FUNCTION 2	/* ZEND_USER_FUNCTION: an op_array */
#define PHP_EVAL_CODE 4		/* ZEND_EVAL_CODE: an op_array of eval()'d code */

/* whether a zend_function of TYPE is an op_array (ZEND_USER_CODE) */
static inline bool php_user_code(__u8 type)
{
	return !(type & 1);
}

/*
 * One PHP process: where its current frame pointer and its VM loop are,
 * and the offsets the walk needs (our table by version, checked against
 * the process). Addresses are the process's; ex_* are word indexes.
 */
struct php_proc {
	__u64 current;		/* &executor_globals.current_execute_data */
	__u64 exec_start;	/* execute_ex: [start, end) */
	__u64 exec_end;
	__u64 jit_start;	/* opcache's JIT code: [start, end), or [0, 0) */
	__u64 jit_end;
	__u64 call_start;	/* zend_call_function: [start, end), or [0, 0) */
	__u64 call_end;
	__u32 version;		/* PHP_VERSION_ID / 100: 802 for 8.2 */
	__u8 ex_opline;		/* zend_execute_data.opline */
	__u8 ex_func;		/* .func */
	__u8 ex_info;		/* .This.u1.type_info: the low half of this word */
	__u8 ex_prev;		/* .prev_execute_data */
	__u16 op_last;		/* zend_op_array: last (u32) and opcodes, two words from here */
	__u16 op_filename;	/* filename, then line_start (u32): the function's tag */
	__u16 zop_lineno;	/* zend_op.lineno */
	__u16 zop_size;		/* sizeof(zend_op) */
};

/*
 * What a frame tells of its zend_function beside the address. A function
 * compiled per request (php-fpm without opcache) or a closure is freed
 * and its address reused; its name, file and first line tell the next
 * one apart. 0 for internal functions reads only the name.
 */
static inline __u32 php_func_tag(__u64 name, __u64 file, __u32 line_start)
{
	/* golden-ratio multiples: near pointers spread */
	return (__u32)(name ^ name >> 32) * 0x9e3779b1u + (__u32)(file ^ file >> 32) * 0x85ebca6bu +
	       line_start;
}

/*
 * A PHP frame takes two slots of a walked user stack (tags in
 * frametypes.h): PHP_TAG_FRAME | zend_function address, then
 * (php_func_tag << 32 | line of its current opline, 0 for internal
 * functions). One slot: PHP_TAG_LOST | enum php_lost_reason, where PHP
 * frames could not be read. A function first seen is announced as
 * PHP_EVENT_FUNC, so userspace reads its names while they live.
 */
enum php_lost_reason {
	PHP_LOST_READ = 1,	/* a frame or its function could not be read */
	PHP_LOST_RUN = 2,	/* more than PHP_MAX_RUN frames in one execute_ex call */
	PHP_LOST_NO_FRAME = 3,	/* an execute_ex call with no frame left in the chain */
	PHP_LOST_JIT = 4,	/* opcache's JIT code ran here: the native frames below it are not walked */
};
#define PHP_LOST_MAX 5

#endif /* EBPFPROF_PHP_H */
