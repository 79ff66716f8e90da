/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Updating the mux: replacing the running generation (mux_update.c), on
 * SIGHUP (standalone) or at the manager's COMMIT (managed). Only one
 * thread ever replaces it: the main thread standalone, the member's
 * thread managed.
 */
#ifndef MUX_UPDATE_H
#define MUX_UPDATE_H

struct mux_app;
struct mux_gen;
struct lb_member_ops;

/*
 * The mux's side of the manager's commit (arg: the struct mux_app): build
 * a generation for a table off the fast path, publish it, or throw it away.
 * Only the member's thread calls them, and in managed mode nothing else
 * replaces the generation.
 */
extern const struct lb_member_ops mux_member_ops;

/* Publish ng, wait an RCU grace period, free the generation it replaced. */
void mux_gen_publish(struct mux_app *app, struct mux_gen *ng);

/*
 * Re-read the configuration file and apply its flow table (SIGHUP). A
 * managed mux only checks the file: its flow table comes from the manager.
 */
int mux_reload(struct mux_app *app);

#endif /* MUX_UPDATE_H */
