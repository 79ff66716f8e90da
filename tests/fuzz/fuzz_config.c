/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration loaders on arbitrary text: mux_config_load() on a whole
 * file (written to a memfd and read back through /proc/self/fd, so the
 * loader's own file handling runs too) or, for the flow table alone,
 * libconfig's config_read_string() and lb_ftable_load() on the flow_table
 * group. Either an error with a message, or a table whose every field is in
 * range; never a crash, and never a leak (freed on both paths).
 *
 * Input: byte 0 chooses the loader (bit 0), the rest is the text. Inputs
 * with "@include" are skipped: including other files is a feature of the
 * format, and would let the fuzzer read arbitrary files (or block on a
 * FIFO) rather than test the loader.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libconfig.h>

#include "fuzz_check.h"
#include "lb_config.h"
#include "lb_flow.h"
#include "lb_hdr.h"
#include "lb_maglev.h"
#include "mux_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_table(const struct lb_ftable *ft)
{
	uint32_t s, b;

	FUZZ_CHECK(lb_is_prime(ft->maglev_size));
	FUZZ_CHECK(ft->maglev_size >= LB_MAGLEV_MIN_SIZE && ft->maglev_size <= LB_MAGLEV_MAX_SIZE);
	FUZZ_CHECK(ft->n_services == 0 || ft->services != NULL);
	for (s = 0; s < ft->n_services; s++) {
		const struct lb_service_cfg *sc = &ft->services[s];

		FUZZ_CHECK(sc->proto == LB_IPPROTO_TCP || sc->proto == LB_IPPROTO_UDP);
		/* A service is one family: an IPv4 one's addresses have no bytes past four. */
		FUZZ_CHECK(sc->af == LB_AF_INET || sc->af == LB_AF_INET6);
		FUZZ_CHECK(sc->af == LB_AF_INET6 ||
			   (sc->vip.a32[1] == 0 && sc->vip.a32[2] == 0 && sc->vip.a32[3] == 0));
		FUZZ_CHECK(sc->port != 0);
		FUZZ_CHECK(sc->n_backends <= LB_MAGLEV_MAX_BACKENDS);
		FUZZ_CHECK(sc->n_backends == 0 || sc->backends != NULL);
		for (b = 0; b < sc->n_backends; b++) {
			FUZZ_CHECK(sc->backends[b].port != 0);
			FUZZ_CHECK(sc->backends[b].weight <= LB_MAGLEV_MAX_WEIGHT);
			FUZZ_CHECK(sc->backends[b].state <= LB_BACKEND_MAINT);
			FUZZ_CHECK(sc->backends[b].host6 <= 1);
			FUZZ_CHECK(sc->af == LB_AF_INET6 || sc->backends[b].dip.a64[1] == 0);
		}
	}
	/* What the loader accepts, a member would build. */
	{
		char why[256];

		FUZZ_CHECK(lb_ftable_validate(ft, why, sizeof(why)) == 0);
	}
}

static int memfd = -1;

static void
load_file(const char *text, size_t len)
{
	struct mux_config mc;
	struct lb_cfg_err err;
	char path[64];

	if (memfd < 0) {
		memfd = memfd_create("fuzz_config", 0);
		FUZZ_CHECK(memfd >= 0);
	}
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, text, len, 0) == (ssize_t)len);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	err.msg[0] = '\0';
	if (mux_config_load(&mc, path, &err) != 0) {
		FUZZ_CHECK(err.msg[0] != '\0');
		return;
	}
	/*
	 * A managed mux's table comes from its manager: none from the file (the
	 * manager group's own fields are main.c's to check, after this).
	 */
	if (mc.managed)
		FUZZ_CHECK(mc.ftable.n_services == 0 && mc.ftable.services == NULL);
	else
		check_table(&mc.ftable);
	/* No ports is allowed: --pcap may supply one. */
	FUZZ_CHECK(mc.n_ports <= MUX_MAX_PORTS);
	FUZZ_CHECK(mc.mtu != 0 && mc.workers != 0);
	FUZZ_CHECK(mc.n_eal_args >= 0 && mc.n_eal_args <= MUX_MAX_EAL_ARGS);
	mux_config_free(&mc);
}

static void
load_string(const char *text)
{
	const config_setting_t *g;
	struct lb_ftable ft;
	struct lb_cfg_err err;
	config_t c;
	int rc;

	config_init(&c);
	if (config_read_string(&c, text) != CONFIG_TRUE) {
		config_destroy(&c);
		return;
	}
	g = config_lookup(&c, "flow_table");
	if (g == NULL)
		g = config_root_setting(&c);
	err.msg[0] = '\0';
	rc = lb_ftable_load(g, &ft, &err);
	if (rc != 0) {
		FUZZ_CHECK(err.msg[0] != '\0');
		FUZZ_CHECK(ft.n_services == 0 && ft.services == NULL);
	} else {
		check_table(&ft);
		lb_ftable_free(&ft);
	}
	config_destroy(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1 || size > 65536)
		return 0;
	text = malloc(size);
	FUZZ_CHECK(text != NULL);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (strstr(text, "@include") == NULL) {
		if (data[0] & 1)
			load_string(text);
		else
			load_file(text, size - 1);
	}
	free(text);
	return 0;
}
