/* perl.h -- what userspace tells the BPF Perl frame reader (bpf/perl.bpf.h) about one perl process */
#ifndef EBPFPROF_PERL_H
#define EBPFPROF_PERL_H

#include "frametypes.h"

/* contexts one runops call may own before the rest is marked lost */
#ifndef PERL_MAX_RUN
#define PERL_MAX_RUN 32
#endif

/*
 * One perl process (a threaded build: MULTIPLICITY): where its interpreters
 * and its runops loop are, and the struct offsets the walk needs,
 * from our table of the versions we know (checked by the unit tests against
 * each version's headers, and at run time against the process).
 */
struct perl_proc {
	__u64 curinterp;	/* &PL_curinterp: the main interpreter (my_perl) */
	__u64 runops_start[2];	/* Perl_runops_standard and Perl_runops_debug: [start, end) */
	__u64 runops_end[2];
	__u16 version;		/* 5.36: 0x0524 */
	__u16 interp_curstackinfo;	/* my_perl->Icurstackinfo */
	__u16 interp_curcop;	/* my_perl->Icurcop: the statement running */
	__u16 si_cxstack;	/* struct stackinfo: its context array */
	__u16 si_prev;		/* the stackinfo below (PUSHSTACKi) */
	__u16 si_cxix;		/* the index of its innermost context (I32; -1: none) */
	__u16 cx_size;		/* sizeof(PERL_CONTEXT) */
	__u16 cx_type;		/* the context's type byte (CXTYPEMASK and flags) */
	__u16 cx_oldcop;	/* the caller's statement when the context was pushed */
	__u16 cx_retop;		/* blk_sub.retop / blk_eval.retop: NULL when a C caller (call_sv, MULTICALL) runs it */
	__u16 cx_sub_cv;	/* blk_sub.cv */
	__u16 cop_line;		/* COP.cop_line (32 bits) */
	__u16 cop_file;		/* COP.cop_file: the file's name (a char *, under ithreads) */
	__u16 xcv_start;	/* XPVCV.xcv_start_u and the 4 words after: its generation */
	__u16 sv_flags;		/* SV.sv_flags: its type in the low byte */
	__u16 padlist_id;	/* PADLIST.xpadl_id: the id perl gives each compiled sub's pad list */
	/*
	 * PL_current_context (the thread's my_perl) from the thread pointer, in
	 * a perl executable's static TLS; 0: none known (a shared libperl), the
	 * main thread's PL_curinterp only
	 */
	__s32 tls_off;
	__u32 pad2;
};

/*
 * A sub's generation, from the words of its XPVCV body from xcv_start on
 * (its first op, its root op, its glob, its file and its pad list) and its
 * pad list's id. A sub made by string eval and freed is followed by another
 * in its memory, and perl's arenas and malloc may hand every one of those
 * pointers back alike ("(eval N)"'s name included: 7 of 3,000 evals in a
 * loop did); the id is perl's count of pad lists made (PL_padlist_generation),
 * new for each compile, shared only by a closure's clones, which are the
 * same code.
 */
#define PERL_CV_WORDS 5

static inline __u32 perl_cv_gen(const __u64 w[PERL_CV_WORDS], __u32 pad_id)
{
	__u64 h = 0;

	/* golden-ratio multiples: near pointers spread */
	for (int i = 0; i < PERL_CV_WORDS; i++)
		h = (h ^ w[i] >> 3) * 0x9e3779b97f4a7c15ull;
	h = (h ^ pad_id) * 0x9e3779b97f4a7c15ull;
	return (__u32)(h >> 32) ^ (__u32)h;
}

/* Perl's own constants, the same in every version we read */
#define PERL_CXTYPEMASK 0xf
#define PERL_CXt_SUB 9
#define PERL_CXt_FORMAT 10
#define PERL_CXt_EVAL 11
#define PERL_CXp_TRYBLOCK 0x40	/* an eval block (CXt_EVAL): the same code, no frame of its own */
#define PERL_CXp_SUB_RE_FAKE 0x80	/* a regex code block's re-entry of its sub (CXt_SUB): hidden, as caller() does */
#define PERL_SVt_PVCV 13

/*
 * A Perl frame takes two slots of a walked user stack (tags in frametypes.h):
 * - PERL_TAG_SUB | CV address, then (line << 32 | generation): a sub or a
 *   format; the generation is its first op >> 3, so a CV freed and its head
 *   reused by another sub is told apart;
 * - PERL_TAG_FILE | the file name's address (a COP's cop_file), then (line
 *   << 32 | enum perl_file_kind): code outside any sub, the program's or an
 *   eval's or a require'd file's.
 * One slot, PERL_TAG_LOST | enum perl_lost_reason, where Perl frames could
 * not be read. Each CV and file name first seen is announced (PERL_EVENT_CV,
 * PERL_EVENT_FILE), so userspace reads its name while the process lives.
 */
enum perl_file_kind {
	PERL_FILE_MAIN = 0,	/* the program's own code, outside any sub */
	PERL_FILE_EVAL = 1,	/* a string eval's or a require'd file's code */
};

enum perl_lost_reason {
	PERL_LOST_NO_INTERP = 1,	/* no interpreter, or no context stack */
	PERL_LOST_READ = 2,	/* a context or a statement could not be read */
	PERL_LOST_RUN = 3,	/* more than PERL_MAX_RUN contexts in one runops call */
	PERL_LOST_THREAD = 4,	/* a thread other than the main one, and no TLS to find its interpreter */
};

#endif /* EBPFPROF_PERL_H */
