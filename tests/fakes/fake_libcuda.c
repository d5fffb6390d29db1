/*
 * A fake libcuda.so.1 (the CUDA driver library) for testing `probe_libcuda`.
 *
 *   FAKE_CUDA_DRIVER_VERSION=12040   what cuDriverGetVersion reports (default 13000)
 *   FAKE_CUDA_STATUS=999             cuDriverGetVersion returns this CUresult instead of 0
 *   FAKE_CUDA_ABORT=1                the library aborts its process when loaded, as a broken
 *                                    driver install can
 *
 * Built with -DFAKE_CUDA_NO_SYMBOL it exports no cuDriverGetVersion at all.
 */
#include <stdlib.h>

__attribute__((constructor)) static void on_load(void) {
    if (getenv("FAKE_CUDA_ABORT")) abort();
}

/* Present in every build, so the library is a valid one even without the symbol under test. */
int cuGetExportTable(const void **table, const void *id) {
    (void)table;
    (void)id;
    return 999;
}

#ifndef FAKE_CUDA_NO_SYMBOL
int cuDriverGetVersion(int *version) {
    const char *status = getenv("FAKE_CUDA_STATUS");
    const char *value = getenv("FAKE_CUDA_DRIVER_VERSION");
    if (status && atoi(status)) return atoi(status);
    *version = value ? atoi(value) : 13000;
    return 0;
}
#endif
