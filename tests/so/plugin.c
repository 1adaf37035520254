/*
 * A shared library that uses fastverbs internally, built (tests/unit/registry.c) twice, as two
 * .so files, with -fvisibility=hidden and a version script exporting only plugin_*: the way
 * libraries usually embed it. Each has its own copy of everything fastverbs defines.
 */
#include <fastverbs/fastverbs.h>

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API struct fv_registry **plugin_anchor(void);
PLUGIN_API struct fv_registry *plugin_registry(void);
PLUGIN_API int plugin_qp_init(struct fv_qp *qp, const struct fv_qp_geom *g);
PLUGIN_API void plugin_qp_cleanup(struct fv_qp *qp);
PLUGIN_API struct fv_qp *plugin_lookup(uint32_t qpn);
PLUGIN_API int plugin_poll(struct fv_cq *cq, struct fv_wc *wc, int n);

/* This object's own anchor: where it keeps the process's tables. */
struct fv_registry **plugin_anchor(void)
{
	return &fv_registry_anchor;
}

struct fv_registry *plugin_registry(void)
{
	return fv_registry_get();
}

int plugin_qp_init(struct fv_qp *qp, const struct fv_qp_geom *g)
{
	return fv_qp_init_geom(qp, g);
}

void plugin_qp_cleanup(struct fv_qp *qp)
{
	fv_qp_cleanup(qp);
}

struct fv_qp *plugin_lookup(uint32_t qpn)
{
	return fv_registry_qp(qpn);
}

int plugin_poll(struct fv_cq *cq, struct fv_wc *wc, int n)
{
	return fv_poll(cq, wc, n);
}
