/* mpi.c — the public face of dist/ (tuning across machines on MPI,
 * docs/distributed.md): joining the job, serving rank 0 on the other
 * ranks, leaving. A build without MPI keeps these entry points and says
 * what it lacks, so `tune --mpi` fails with a reason instead of being an
 * unknown option. rt_tune (tune.c) deals batches out when given the job. */
#include <stdlib.h>

#include "api/api.h"

int rt_mpi_launched(void)
{
    /* set by Open MPI's mpirun, and by PMIx launchers (srun, prterun) */
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

#ifdef HAVE_MPI
rt_mpi *rt_mpi_start(FILE *errs)
{
    /* MPI_Init outside a job tries to start one of its own (a singleton),
     * which can wait forever where no daemon can be reached */
    if (!rt_mpi_launched()) {
        if (errs)
            fputs("relay-tune: error: --mpi: this process was not started by mpirun (mpirun -np N relay-tune "
                  "tune MODEL --mpi ...; docs/distributed.md)\n",
                  errs);
        return NULL;
    }
    su_buf err = {0};
    dist_comm *c = dist_comm_start(&err);
    if (!c && errs)
        fprintf(errs, "relay-tune: error: %s\n", su_buf_str(&err));
    su_buf_free(&err);
    if (!c)
        return NULL;
    rt_mpi *h = su_calloc(1, sizeof *h);
    h->c = c;
    return h;
}

int rt_mpi_rank(const rt_mpi *c)
{
    return dist_comm_rank(c->c);
}

int rt_mpi_size(const rt_mpi *c)
{
    return dist_comm_size(c->c);
}

int rt_mpi_serve(rt_mpi *c, rt_runner *r, const char *target, int jobs, FILE *errs)
{
    su_buf err = {0};
    bool ok = dist_serve(c->c, r->r, target ? target : "cpu", jobs, &err);
    if (!ok && errs)
        fprintf(errs, "relay-tune: error: mpi rank %d: %s\n", dist_comm_rank(c->c), su_buf_str(&err));
    su_buf_free(&err);
    return ok ? 0 : -1;
}

void rt_mpi_stop(rt_mpi *c, int status)
{
    if (!c)
        return;
    dist_comm_stop(c->c, status);
    free(c);
}
#else
static void no_mpi(FILE *errs)
{
    if (errs)
        fputs("relay-tune: error: --mpi needs a relay-tune built with MPI: install libopenmpi-dev and "
              "openmpi-bin (scripts/setup.sh), then configure and build again\n",
              errs);
}

rt_mpi *rt_mpi_start(FILE *errs)
{
    no_mpi(errs);
    return NULL;
}

/* Without MPI no rt_mpi exists, so these are never reached with one. */
int rt_mpi_rank(const rt_mpi *c)
{
    (void)c;
    return 0;
}

int rt_mpi_size(const rt_mpi *c)
{
    (void)c;
    return 1;
}

int rt_mpi_serve(rt_mpi *c, rt_runner *r, const char *target, int jobs, FILE *errs)
{
    (void)c, (void)r, (void)target, (void)jobs;
    no_mpi(errs);
    return -1;
}

void rt_mpi_stop(rt_mpi *c, int status)
{
    (void)c, (void)status;
}
#endif
