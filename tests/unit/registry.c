/*
 * The process-wide tables (registry.h) across shared objects: two libraries that embed
 * fastverbs, built with -fvisibility=hidden and a version script (tests/so/plugin.c), loaded
 * with dlopen(RTLD_LOCAL) next to this program's own copy. Each has its own anchor, yet all
 * three find one set of tables: a QP registered in one is found, and its completions are
 * polled, in another; two threads in two of them looking for the first time at once find
 * the same.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "cqe-util.h"

#ifndef FV_PLUGIN_DIR
#error "FV_PLUGIN_DIR: the directory of libfvplug-a.so and libfvplug-b.so (Makefile)"
#endif

struct plugin {
	void *so;
	struct fv_registry **(*anchor)(void);
	struct fv_registry *(*registry)(void);
	int (*qp_init)(struct fv_qp *qp, const struct fv_qp_geom *g);
	void (*qp_cleanup)(struct fv_qp *qp);
	struct fv_qp *(*lookup)(uint32_t qpn);
	int (*poll)(struct fv_cq *cq, struct fv_wc *wc, int n);
};

static void *sym(void *so, const char *name)
{
	void *p = dlsym(so, name);

	cr_assert(p, "dlsym %s: %s", name, dlerror());
	return p;
}

static void plugin_open(struct plugin *p, const char *file)
{
	p->so = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	cr_assert(p->so, "dlopen %s: %s", file, dlerror());
	*(void **)&p->anchor = sym(p->so, "plugin_anchor");
	*(void **)&p->registry = sym(p->so, "plugin_registry");
	*(void **)&p->qp_init = sym(p->so, "plugin_qp_init");
	*(void **)&p->qp_cleanup = sym(p->so, "plugin_qp_cleanup");
	*(void **)&p->lookup = sym(p->so, "plugin_lookup");
	*(void **)&p->poll = sym(p->so, "plugin_poll");
	cr_assert_null(dlsym(p->so, "fv_registry_anchor"), "the anchor must not be exported");
}

static struct plugin a, b;

static void setup(void)
{
	plugin_open(&a, FV_PLUGIN_DIR "/libfvplug-a.so");
	plugin_open(&b, FV_PLUGIN_DIR "/libfvplug-b.so");
}

/* Plain memory for a QP, as tqp_init lays it out, but registered by whoever gets g. */
static struct fv_qp_geom geom(struct tqp *t, uint32_t qpn)
{
	memset(t, 0, sizeof(*t));
	t->sq = tqp_alloc(16 * 64);
	t->bf = tqp_alloc(512);
	t->dbrec = tqp_alloc(64);
	return (struct fv_qp_geom){ .qpt = FV_QPT_RC, .qpn = qpn, .sq_buf = t->sq, .sq_wqe_cnt = 16,
		.dbrec = t->dbrec, .bf_reg = t->bf, .bf_size = 256, .max_send_sge = 1 };
}

TestSuite(registry, .init = setup);

/* Three objects, three anchors (hidden really is hidden), one set of tables. */
Test(registry, hidden_objects_share_one)
{
	cr_assert_neq(a.anchor(), b.anchor());
	cr_assert_neq(a.anchor(), &fv_registry_anchor);
	cr_assert_neq(b.anchor(), &fv_registry_anchor);
	struct fv_registry *r = a.registry();

	cr_assert_not_null(r);
	cr_assert_eq(b.registry(), r);
	cr_assert_eq(fv_registry_get(), r);
	cr_assert_eq(*a.anchor(), r);
	cr_assert_eq(*b.anchor(), r);
	cr_assert_neq(r, &fv_registry_own, "the shared tables are on the heap, not one object's");
}

/* A QP registered in a is found in b and here; cleaned up in b, it is gone for a. */
Test(registry, register_in_one_look_up_in_another)
{
	struct tqp t;
	struct fv_qp_geom g = geom(&t, 0x4a11);

	cr_assert_null(b.lookup(0x4a11));
	cr_assert_eq(a.qp_init(&t.qp, &g), 0);
	cr_assert_eq(b.lookup(0x4a11), &t.qp);
	cr_assert_eq(fv_registry_qp(0x4a11), &t.qp);
	cr_assert_null(b.lookup(0x4a12), "a neighbour in the same page stays empty");
	b.qp_cleanup(&t.qp);
	cr_assert_null(a.lookup(0x4a11));
	cr_assert_null(fv_registry_qp(0x4a11));
	free(t.sq), free(t.bf), free(t.dbrec);
}

/* Completions of a QP that b registered, on a CQ set up here, polled by a. */
Test(registry, poll_in_another_object)
{
	struct tqp t;
	struct fv_qp_geom g = geom(&t, 0x5b22);
	struct cqe_cq c;
	uint64_t buf;
	struct ibv_sge s = { (uintptr_t)&buf, 8, 0x100 };
	struct fv_wc wc[2];

	cr_assert_eq(b.qp_init(&t.qp, &g), 0);
	cqe_cq_init(&c, 8, 64, 0);
	uint32_t at1 = cqe_post_send(&t.qp, MLX5_OPCODE_SEND, FV_SIGNALED, 0x1111, &s, 1);
	uint32_t at2 = cqe_post_send(&t.qp, MLX5_OPCODE_RDMA_WRITE, FV_SIGNALED, 0x2222, &s, 1);

	cqe_req(&c, 0x5b22, MLX5_OPCODE_SEND, (uint16_t)at1, 0, 0);
	cqe_req(&c, 0x5b22, MLX5_OPCODE_RDMA_WRITE, (uint16_t)at2, 0, 0);
	cr_assert_eq(a.poll(&c.cq, wc, 2), 2);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 0x1111);
	cr_assert_eq(wc[0].qp_num, 0x5b22);
	cr_assert_eq(wc[1].wr_id, 0x2222);
	cr_assert_eq(wc[1].opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(t.qp.sq.ci, t.qp.sq.pi, "the WQEs retired in the QP b registered");
	b.qp_cleanup(&t.qp);
	cqe_cq_free(&c);
	free(t.sq), free(t.bf), free(t.dbrec);
}

struct race {
	pthread_barrier_t *go;	/* both threads wait on the one barrier */
	struct fv_registry *(*registry)(void);
	struct fv_registry *got;
};

static void *race_run(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(r->go);
	r->got = r->registry();
	return NULL;
}

/* In a fresh process: a and b look for the tables for the first time at the same moment.
 * Exits 0 if they found the same, 1 if not, 2 if the round could not be set up. */
static void race_round(void)
{
	pthread_barrier_t go;
	struct race ra = { &go, a.registry, NULL }, rb = { &go, b.registry, NULL };
	pthread_t ta, tb;

	if (pthread_barrier_init(&go, NULL, 2) || pthread_create(&ta, NULL, race_run, &ra) ||
	    pthread_create(&tb, NULL, race_run, &rb))
		_exit(2);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	_exit(ra.got && ra.got == rb.got ? 0 : 1);
}

/* Two libraries, two threads, first use at once, many rounds: the loader's lock serializes
 * the looking, so they never make two sets of tables. */
Test(registry, simultaneous_first_use)
{
	for (int round = 0; round < 64; round++) {
		int status;
		pid_t pid = fork();

		cr_assert(pid >= 0);
		if (pid == 0)
			race_round();
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "round %d: the two libraries made different tables (status %#x)", round, status);
	}
}
