/* spin_ptx: the PTX of spin.cu (the spin and empty kernels), embedded by
 * tools/embed_ptx.py, and where it came from (nvcc at build time, or the
 * committed spin.ptx). */
#ifndef GPUOPT_SPIN_PTX_H
#define GPUOPT_SPIN_PTX_H

extern const char fit_spin_ptx[];
extern const char fit_spin_ptx_origin[];

#endif
