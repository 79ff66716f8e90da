/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The speaker: a child process of the mux that runs BIRD and tells it what
 * to announce. The mux forks it before EAL starts (no threads exist yet,
 * so the fork copies nothing half-locked), and it shares nothing with the
 * mux but the route page (mux_route_page.h).
 *
 * Why a process and not a thread: its life is tied to the mux's by the
 * kernel. The speaker asks for SIGKILL when the mux dies
 * (PR_SET_PDEATHSIG), and asks the same for BIRD, its own child; so a
 * kill -9 of the mux kills the speaker, which kills BIRD, and the kernel
 * closes BIRD's TCP sessions at once: the routers withdraw the mux within
 * a tenth of a second instead of waiting out a hold timer. A thread could
 * not outlive a frozen mux to withdraw it, and this process can: if the
 * mux's heartbeat stops moving (SIGSTOP, a stuck worker) for longer than
 * the hold time allows, the speaker withdraws everything, and announces
 * again when the heartbeat resumes.
 *
 * The loop, every 100 ms: reap BIRD (restart it, with back-off, if it
 * died), read the mux's section, decide what BIRD should announce (the
 * mux's set, or nothing when the mux withdraws all or its heartbeat is
 * stale), rewrite the routes file and "configure" when that differs from
 * what BIRD runs, read "show protocols", publish its own section. It fails
 * closed: a reconfiguration or control-socket failure that leaves a route
 * announced which should not be kills BIRD, so the sessions drop.
 */
#ifndef MUX_SPEAKER_H
#define MUX_SPEAKER_H

#include <sys/types.h>

#include "mux_bgp_cfg.h"
#include "mux_bird.h"
#include "mux_route_page.h"

#define MUX_SPEAKER_POLL_MS 100
/* The heartbeat may be this much younger than the hold time: detection,
 * one reconfiguration and the routers' own work fit in it, so the routers
 * have withdrawn a frozen mux within hold_time. */
#define MUX_SPEAKER_MARGIN_MS 500

/* Milliseconds of heartbeat silence after which everything is withdrawn. */
static inline uint64_t
mux_speaker_stale_ms(const struct mux_bgp_cfg *cfg)
{
	return (uint64_t)cfg->hold_time * 1000 - MUX_SPEAKER_MARGIN_MS;
}

/*
 * The speaker's body, in the child the mux forked (mux: the parent's pid).
 * Never returns: it exits when the mux asks it to stop, when the mux dies,
 * or on SIGTERM, bringing BIRD down first.
 */
void mux_speaker_main(const struct mux_bgp_cfg *cfg, const struct mux_bird_paths *paths,
	struct mux_route_page *page, pid_t mux) __attribute__((noreturn));

#endif /* MUX_SPEAKER_H */
