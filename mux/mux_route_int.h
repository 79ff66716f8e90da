/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the mux's routing side: the handle mux_route.c runs and
 * mux_route_report.c reports. Nothing outside these two files includes it.
 */
#ifndef MUX_ROUTE_INT_H
#define MUX_ROUTE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mux_announce.h"
#include "mux_bird.h"
#include "mux_config.h"
#include "mux_route.h"
#include "mux_route_page.h"

struct mux_gen;

enum mux_route_phase {
	MUX_ROUTE_RUNNING,
	MUX_ROUTE_WITHDRAWING, /* shutdown: waiting for the speaker's confirmation */
	MUX_ROUTE_DRAINING,    /* withdrawn; still forwarding until drain_until_ms */
	MUX_ROUTE_DONE,	       /* app->ctx.quit set */
};

struct mux_route {
	struct mux_bgp_cfg cfg;
	struct mux_bird_paths paths;
	bool files_made; /* the run folder's files are ours to remove */
	bool dir_made;	 /* ... and the folder too */
	struct mux_route_page *page;
	pid_t speaker;
	bool speaker_gone;
	char speaker_exit[MUX_RP_TEXT];
	uint64_t speaker_errors; /* seen from this side: the speaker died */
	volatile bool quit;	 /* SIGTERM/SIGINT */
	struct mux_app *app;
	pthread_t thread;
	bool thread_started;
	bool stop_thread;

	/* Owned by the route thread; lock held for every change and read. */
	pthread_mutex_t lock;
	struct mux_announce *ann;  /* the decision */
	struct mux_rp_mux mine;	   /* what was last published */
	struct mux_rp_speaker spk; /* the speaker's section, last consistent copy */
	const struct mux_gen *last_gen;
	uint64_t last_version;
	bool told_v6;	       /* the IPv6 services not announced were logged */
	bool told_dropped;     /* the VIPs past MUX_ANN_MAX_VIPS were logged */
	uint64_t spk_seen_ms;  /* when the speaker's section last moved (this thread's time) */
	uint64_t last_tick_ms; /* this thread's previous pass */
	uint64_t loops[MUX_MAX_WORKERS];
	uint64_t progress_ms[MUX_MAX_WORKERS];
	enum mux_route_phase phase;
	uint64_t shutdown_ms;
	uint64_t withdrawn_ms;
	uint64_t drain_until_ms;
};

/* /sluice/route (mux_route_report.c); forget before r is freed. */
int mux_route_telemetry_register(struct mux_route *r);
void mux_route_telemetry_forget(struct mux_route *r);

#endif /* MUX_ROUTE_INT_H */
