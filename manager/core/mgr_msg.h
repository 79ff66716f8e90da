/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The manager's own messages: whichever subsystem sends one (the commit
 * driver, the member protocol, the transport, HA, snapshots, the store's
 * table blobs), it starts zeroed, typed, and signed "manager".
 */
#ifndef MGR_MSG_H
#define MGR_MSG_H

#include "lb_codec.h"

/* *m zeroed, then its type and sender. */
void mgr_msg_init(struct lb_msg *m, enum lb_msg_type type);

/* The same, calloc'd (free it as the caller's fields require); NULL when out of memory. */
struct lb_msg *mgr_msg_new(enum lb_msg_type type);

#endif /* MGR_MSG_H */
