/* symbolize.h -- public header of symbolize/: turning addresses into names: the symbolizer and the /proc, ELF and demangling readers other stages share */
#ifndef EBPFPROF_SYMBOLIZE_MODULE_H
#define EBPFPROF_SYMBOLIZE_MODULE_H

#include "procfs.h"
#include "proc_maps.h"
#include "elf_syms.h"
#include "demangle.h"
#include "symbolizer.h"

#endif /* EBPFPROF_SYMBOLIZE_MODULE_H */
