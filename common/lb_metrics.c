/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /metrics endpoint on nng's HTTP server (lb_metrics.h).
 *
 * nng calls the handler on one of its own threads with the request; the
 * handler renders into memory (open_memstream), copies that into the
 * response and finishes the aio. Renders are serialized by a mutex, so a
 * daemon's render function never runs twice at once; stopping takes the
 * same mutex after nng_http_server_stop(), so no render is under way once
 * lb_metrics_stop() returns. A handler nng already called may still be
 * about to take the mutex then: the struct is freed by the handler's
 * destructor, when nng frees the handler, never before.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "lb_err.h"
#include "lb_metrics.h"
#include "lb_prom.h"

struct lb_metrics {
	nng_http_server *srv;
	lb_metrics_render_fn render;
	void *arg;
	pthread_mutex_t lock;
	bool stopped;
	char url[96];
};

static void
reply(nng_aio *aio, uint16_t status, const char *type, const void *body, size_t len)
{
	nng_http_res *res;
	int rc;

	rc = status == 200 ? nng_http_res_alloc(&res) : nng_http_res_alloc_error(&res, status);
	if (rc != 0) {
		nng_aio_finish(aio, rc);
		return;
	}
	if (status == 200 && ((rc = nng_http_res_set_header(res, "Content-Type", type)) != 0 ||
				     (rc = nng_http_res_copy_data(res, body, len)) != 0)) {
		nng_http_res_free(res);
		nng_aio_finish(aio, rc);
		return;
	}
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
}

static void
on_metrics(nng_aio *aio)
{
	struct lb_metrics *m = nng_http_handler_get_data(nng_aio_get_input(aio, 1));
	char *body = NULL;
	size_t len = 0;
	FILE *out;
	bool cut;

	out = open_memstream(&body, &len);
	if (out == NULL) {
		reply(aio, 500, NULL, NULL, 0);
		return;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->stopped)
		m->render(m->arg, out);
	pthread_mutex_unlock(&m->lock);
	/* A write that failed (out of memory) left the text cut: no 200 for it. */
	cut = ferror(out) != 0;
	if (fclose(out) != 0 || cut) {
		free(body);
		reply(aio, 500, NULL, NULL, 0);
		return;
	}
	/* Nothing to say (the manager's loop has not rendered in time): no 200 either. */
	if (len == 0) {
		free(body);
		reply(aio, 503, NULL, NULL, 0);
		return;
	}
	reply(aio, 200, LB_PROM_CONTENT_TYPE, body, len);
	free(body);
}

static void
metrics_free(void *arg)
{
	struct lb_metrics *m = arg;

	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* The bound address as ADDRESS:PORT (IPv6 in brackets). */
static void
bound_url(struct lb_metrics *m, const char *listen)
{
	char a[INET6_ADDRSTRLEN];
	nng_sockaddr sa;

	if (nng_http_server_get_addr(m->srv, &sa) == 0 && sa.s_family == NNG_AF_INET) {
		inet_ntop(AF_INET, &sa.s_in.sa_addr, a, sizeof(a));
		snprintf(m->url, sizeof(m->url), "http://%s:%u/metrics", a, ntohs(sa.s_in.sa_port));
	} else if (nng_http_server_get_addr(m->srv, &sa) == 0 && sa.s_family == NNG_AF_INET6) {
		inet_ntop(AF_INET6, sa.s_in6.sa_addr, a, sizeof(a));
		snprintf(m->url, sizeof(m->url), "http://[%s]:%u/metrics", a,
			ntohs(sa.s_in6.sa_port));
	} else {
		snprintf(m->url, sizeof(m->url), "http://%s/metrics", listen);
	}
}

struct lb_metrics *
lb_metrics_start(const struct lb_metrics_cfg *cfg, lb_metrics_render_fn render, void *arg,
	char *err, size_t len)
{
	struct lb_metrics *m = lb_zalloc(sizeof(*m), "metrics", err, len);
	nng_http_handler *h = NULL;
	nng_url *url = NULL;
	char u[96];
	int rc;

	if (m == NULL)
		return NULL;
	m->render = render;
	m->arg = arg;
	pthread_mutex_init(&m->lock, NULL);
	snprintf(u, sizeof(u), "http://%s", cfg->listen);
	if ((rc = nng_url_parse(&url, u)) != 0 || (rc = nng_http_server_hold(&m->srv, url)) != 0) {
		snprintf(err, len, "metrics: %s: %s", cfg->listen, nng_strerror(rc));
		goto fail;
	}
	if ((rc = nng_http_handler_alloc(&h, "/metrics", on_metrics)) != 0) {
		snprintf(err, len, "metrics: handler: %s", nng_strerror(rc));
		goto fail;
	}
	/*
	 * From here h owns m: freeing h frees m (metrics_free). This must be
	 * said before the handler is added: nng refuses set_data on a handler
	 * a server holds (NNG_EBUSY), and m would then outlive the server.
	 */
	nng_http_handler_set_data(h, m, metrics_free);
	nng_url_free(url);
	if ((rc = nng_http_server_add_handler(m->srv, h)) != 0) {
		snprintf(err, len, "metrics: handler: %s", nng_strerror(rc));
		nng_http_server_release(m->srv);
		nng_http_handler_free(h);
		return NULL;
	}
	if ((rc = nng_http_server_start(m->srv)) != 0) {
		snprintf(err, len, "metrics: cannot listen on %s: %s", cfg->listen,
			nng_strerror(rc));
		m->stopped = true;
		nng_http_server_release(m->srv);
		return NULL;
	}
	bound_url(m, cfg->listen);
	return m;
fail:
	if (url != NULL)
		nng_url_free(url);
	if (m->srv != NULL)
		nng_http_server_release(m->srv);
	metrics_free(m);
	return NULL;
}

const char *
lb_metrics_url(const struct lb_metrics *m)
{
	return m->url;
}

void
lb_metrics_stop(struct lb_metrics *m)
{
	if (m == NULL)
		return;
	nng_http_server_stop(m->srv);
	pthread_mutex_lock(&m->lock);
	m->stopped = true;
	pthread_mutex_unlock(&m->lock);
	nng_http_server_release(m->srv); /* m goes with the handler */
}
