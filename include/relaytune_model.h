/* relaytune_model.h — the C ABI of a model compiled by `relay-tune compile`
 * (docs/compiled-model.md). A compiled model is one shared object that
 * depends only on libc, libm and the OpenMP runtime (libgomp); it holds the
 * kernels, the weights (already packed) and the graph's calls over a static
 * memory plan. Link it (cc app.c model.so -Wl,-rpath,...) or dlopen it and
 * look the functions up by these names.
 *
 * An instance (rtm_create) owns its input, output and intermediate buffers:
 * fill the inputs, rtm_run, read the outputs. Instances are independent;
 * one instance must not run on two threads at once. Kernels run their
 * parallel loops on OpenMP threads (OMP_NUM_THREADS sets how many).
 *
 * Tensors are dense, C order, in the dtypes of Relay ("float32", "int64",
 * ...). Input names are @main's parameter names without the %; outputs are
 * named "0", "1", ... in the order of the flattened result tuple. Buffers
 * are 64-byte aligned. */
#ifndef RELAYTUNE_MODEL_H
#define RELAYTUNE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI a model exports (1). */
#define RELAYTUNE_MODEL_ABI 1
int rtm_abi_version(void);

/* The vector ISA the model's kernels were compiled for ("avx512", "avx2",
 * "sse4.2", "x86-64"); a host without it cannot run the model. */
const char *rtm_target_isa(void);

/* One instance of the model: its buffers. */
typedef struct rtm_model rtm_model;

/* A new instance with zeroed inputs; NULL when memory is short. */
rtm_model *rtm_create(void);
/* Frees an instance (NULL is fine). */
void rtm_destroy(rtm_model *m);
/* Runs the model on the instance's inputs: 0, or -1 when a kernel could not
 * allocate its scratch memory. */
int rtm_run(rtm_model *m);

/* The inputs: how many, their names, dtypes, ranks, extents and sizes in
 * bytes (NULL / -1 / 0 for an index out of range). */
int rtm_num_inputs(void);
const char *rtm_input_name(int i);
const char *rtm_input_dtype(int i);
int rtm_input_ndim(int i);
const int64_t *rtm_input_shape(int i);
size_t rtm_input_nbytes(int i);
/* The index of the input called name, or -1. */
int rtm_input_index(const char *name);
/* The buffer of input i (rtm_input_nbytes(i) bytes) to fill before rtm_run. */
void *rtm_input(rtm_model *m, int i);
/* Copies nbytes of data into the input called name: 0, or -1 for an unknown
 * name or a size that is not the input's. */
int rtm_set_input(rtm_model *m, const char *name, const void *data, size_t nbytes);

/* The outputs, likewise. */
int rtm_num_outputs(void);
const char *rtm_output_name(int i);
const char *rtm_output_dtype(int i);
int rtm_output_ndim(int i);
const int64_t *rtm_output_shape(int i);
size_t rtm_output_nbytes(int i);
/* The buffer of output i, valid until the next rtm_run or rtm_destroy. */
const void *rtm_output(const rtm_model *m, int i);

/* Bytes of the arena that holds every intermediate tensor (the memory
 * plan's peak), allocated once per instance. */
size_t rtm_arena_bytes(void);

/* The per-kernel profile (cpu models; `relay-tune bench --profile`). A run
 * is a sequence of steps, one kernel call each, in order. */
/* The steps of a run. */
int rtm_num_steps(void);
/* Step i's name: its fused ops and result shape, e.g.
 * "nn.conv2d+add+nn.relu 1x64x56x56" (NULL out of range). */
const char *rtm_step_name(int i);
/* The distinct kernel step i calls (steps of one workload share one), or -1. */
int rtm_step_kernel(int i);
/* The FLOPs of step i, or -1. */
long long rtm_step_flops(int i);
/* Profiles the instance's runs: each rtm_run then writes step i's seconds
 * to seconds[i] (rtm_num_steps() of them); NULL turns it off. Off, a run
 * costs one branch a step more than without the profile. */
void rtm_profile(rtm_model *m, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
