/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-manager --check (like nginx -t, haproxy -c): what loading the
 * configuration does not look at, checked without opening the database
 * or binding a socket. The loader (mgr_config.c) has already checked
 * every field and that the files it names are readable; this parses the
 * TLS files (the CA; the certificate, and that the key is its key), loads
 * the services file as the manager would at start (its flow table and
 * pools, and its seed against manager.hash_seed), and looks at where the
 * database goes (an existing file must be readable and writable, a new
 * one's first existing folder writable: the manager creates the rest).
 */
#ifndef MGR_CHECK_H
#define MGR_CHECK_H

#include "lb_config.h"

struct mgr_config;

/* 0, or -LB_ECONFIG with err "FILE:LINE: field: message". */
int mgr_check(const struct mgr_config *cfg, struct lb_cfg_err *err);

#endif /* MGR_CHECK_H */
