/* deliver.h -- public header of deliver/: where finished profiles go: push (with queue and spool), the pull HTTP server, Prometheus text, files on disk */
#ifndef EBPFPROF_DELIVER_MODULE_H
#define EBPFPROF_DELIVER_MODULE_H

#include "pusher.h"
#include "http_server.h"
#include "prom.h"
#include "profile_dir.h"

#endif /* EBPFPROF_DELIVER_MODULE_H */
