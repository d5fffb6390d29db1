/*
 * A fake libnvidia-ml.so.1 for testing gpudoctor's NVML probe through the real nvidia-ml-py
 * binding. It exports the symbols pynvml calls for what `probe_nvml` reads, with the struct
 * layouts pynvml declares (nvmlMemory_t, nvmlPciInfo_t) and NVML's return codes.
 *
 * Behaviour is scripted by environment variables, read at call time:
 *
 *   FAKE_NVML_INIT_ERROR=9          nvmlInit* returns this code (9 DRIVER_NOT_LOADED, 18 ...)
 *   FAKE_NVML_INIT_SLEEP=3600       nvmlInit* blocks this many seconds first, as a wedged
 *                                   driver does (signals do not cut the sleep short)
 *   FAKE_NVML_FAIL=fn=code,...      the named function returns `code` (e.g.
 *                                   nvmlDeviceGetCount_v2=4, nvmlShutdown=999)
 *   FAKE_NVML_DRIVER=580.65.06      nvmlSystemGetDriverVersion
 *   FAKE_NVML_CUDA=13000            nvmlSystemGetCudaDriverVersion(_v2)
 *   FAKE_NVML_NVML_VERSION=...      nvmlSystemGetNVMLVersion (default "13." + driver)
 *   FAKE_NVML_GPUS="name:cc:bytes;..."   one entry per GPU ("NVIDIA H100 80GB HBM3:9.0:85899345920")
 *   FAKE_NVML_LOST_GPU=1            that index's handle (and queries) return 15 GPU_IS_LOST
 *   FAKE_NVML_NOT_SUPPORTED=mig,persistence,cuda,nvmlversion   these return 3 NOT_SUPPORTED;
 *                                   "mig:1" limits it to GPU 1
 *   FAKE_NVML_PERSISTENCE=1         persistence mode of every GPU (default 1 = enabled);
 *                                   FAKE_NVML_PERSISTENCE_<index> for one GPU
 *   FAKE_NVML_MIG_GPUS=0,2          GPUs with MIG mode enabled (default none)
 *
 * Health (per GPU: FAKE_NVML_<KEY>_<index>, else FAKE_NVML_<KEY> for every GPU, else a healthy
 * default; the value NA makes that query return 3 NOT_SUPPORTED, as on a GeForce):
 *   ECC_MODE=1 ECC_PENDING=1        nvmlDeviceGetEccMode (current, pending)
 *   ECC_VOL_UNC ECC_AGG_UNC ECC_VOL_CORR ECC_AGG_CORR   nvmlDeviceGetTotalEccErrors (0)
 *   RETIRED_SBE RETIRED_DBE         nvmlDeviceGetRetiredPages count per cause (0)
 *   RETIRED_PENDING                 nvmlDeviceGetRetiredPagesPendingStatus (0)
 *   REMAP_CORR REMAP_UNC REMAP_PENDING REMAP_FAILURE   nvmlDeviceGetRemappedRows (0)
 *   CLOCK_EVENTS=0x1                nvmlDeviceGetCurrentClocksEventReasons mask (GPU Idle)
 *   TEMP=35 TEMP_SLOWDOWN=87 TEMP_SHUTDOWN=92           °C
 *   POWER_MW=70000 POWER_LIMIT_MW=700000
 *   PCIE_GEN=5 PCIE_GEN_MAX=5 PCIE_WIDTH=16 PCIE_WIDTH_MAX=16 PCIE_REPLAYS=0
 *   COMPUTE_MODE=0                  nvmlDeviceGetComputeMode (2 Prohibited, 3 Exclusive_Process)
 *   RECOVERY_ACTION=0               nvmlDeviceGetFieldValues' NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
 *                                   (1 Reset, 2 Reboot, 3 Drain P2P, 4 Drain and Reset)
 *   FABRIC_STATE=0 FABRIC_STATUS=0  nvmlDeviceGetGpuFabricInfo and …InfoV (state 0: no NVSwitch;
 *                                   1 not started, 2 in progress, 3 completed)
 *   FABRIC_HEALTH_MASK=0 FABRIC_SUMMARY=1   nvmlDeviceGetGpuFabricInfoV's healthMask (v2, v3)
 *                                   and healthSummary (v3: 1 healthy, 2 unhealthy, 3 limited)
 *   FABRIC_VERSION=3                the newest nvmlGpuFabricInfo version …InfoV accepts (2: a
 *                                   driver before healthSummary; a newer struct version gets
 *                                   25 ARGUMENT_VERSION_MISMATCH, as NVML answers)
 *   PROCS="pid:bytes:C,pid:NA:G"    nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3 (and _v2):
 *                                   24-byte nvmlProcessInfo_t entries, the size drivers from
 *                                   535.98 on write (nvidia-ml-py 12.535.77 read 32)
 *
 *   FAKE_NVML_STATE=path            a recorded GPU state: one NAME=value per line (# comments),
 *                                   each set as FAKE_NVML_NAME at nvmlInit unless that variable
 *                                   is already set (tests/gpu_states.py writes these files from
 *                                   `nvidia-smi -q -x` dumps)
 *
 * Built with -DFAKE_NVML_OLD it omits nvmlSystemGetCudaDriverVersion_v2,
 * nvmlDeviceGetMigMode, nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetTemperatureV,
 * nvmlDeviceGetGpuFabricInfoV and the _v3 process queries, as an old driver's library (R470)
 * does: pynvml raises FunctionNotFound, and for the unversioned process queries
 * NVMLLibraryMismatchError (not an NVMLError); the probe falls back to
 * …ClocksThrottleReasons, nvmlDeviceGetTemperature, …FabricInfo and the _v2 process queries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

#define MAX_GPUS 16

typedef struct {
    unsigned int index;
    char name[96];
    int major;
    int minor;
    unsigned long long memory;
} fake_gpu;

typedef fake_gpu *nvmlDevice_t;

static fake_gpu gpus[MAX_GPUS];
static unsigned int gpu_count;
static int init_count;

static const char *env(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v ? v : fallback;
}

/* FAKE_NVML_FAIL="fn=code,fn=code": the code scripted for `fn`, or 0. */
static int scripted_failure(const char *fn) {
    const char *spec = getenv("FAKE_NVML_FAIL");
    size_t n = strlen(fn);
    while (spec && *spec) {
        if (strncmp(spec, fn, n) == 0 && spec[n] == '=') {
            return atoi(spec + n + 1);
        }
        spec = strchr(spec, ',');
        if (spec) spec++;
    }
    return 0;
}

/* Whether an index list ("0,2") contains `index`. */
static int list_has_index(const char *list, unsigned int index) {
    while (list && *list) {
        char *end;
        long v = strtol(list, &end, 10);
        if (end != list && v == (long)index) return 1;
        list = strchr(list, ',');
        if (list) list++;
    }
    return 0;
}

/* FAKE_NVML_NOT_SUPPORTED="mig,persistence:1": whether `what` is unsupported on `index`
 * (index < 0: a system-wide query). */
static int not_supported(const char *what, int index) {
    const char *spec = getenv("FAKE_NVML_NOT_SUPPORTED");
    size_t n = strlen(what);
    while (spec && *spec) {
        if (strncmp(spec, what, n) == 0) {
            char c = spec[n];
            if (c == '\0' || c == ',') return 1;
            if (c == ':' && (index < 0 || atoi(spec + n + 1) == index)) return 1;
        }
        spec = strchr(spec, ',');
        if (spec) spec++;
    }
    return 0;
}

static void load_gpus(void) {
    const char *spec = env("FAKE_NVML_GPUS", "NVIDIA H100 80GB HBM3:9.0:85899345920");
    char buf[4096];
    char *save = NULL;
    gpu_count = 0;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *item = strtok_r(buf, ";", &save); item && gpu_count < MAX_GPUS;
         item = strtok_r(NULL, ";", &save)) {
        char *mem = strrchr(item, ':');
        if (!mem) continue;
        *mem++ = '\0';
        char *cc = strrchr(item, ':');
        if (!cc) continue;
        *cc++ = '\0';
        fake_gpu *g = &gpus[gpu_count];
        g->index = gpu_count;
        snprintf(g->name, sizeof g->name, "%s", item);
        if (sscanf(cc, "%d.%d", &g->major, &g->minor) != 2) continue;
        g->memory = strtoull(mem, NULL, 10);
        gpu_count++;
    }
}

static int copy_string(char *out, unsigned int length, const char *value) {
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, value, strlen(value) + 1);
    return NVML_SUCCESS;
}

static int lost(unsigned int index) {
    return list_has_index(getenv("FAKE_NVML_LOST_GPU"), index);
}

/* The checks every device query starts with. */
static int check_device(const char *fn, nvmlDevice_t device) {
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    int code = scripted_failure(fn);
    if (code) return code;
    if (device < gpus || device >= gpus + MAX_GPUS) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(device->index)) return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

static int check_system(const char *fn) {
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    return scripted_failure(fn);
}

/* ------------------------------------------------------------------ init */

static void block_for(double seconds) {
    struct timespec left;
    if (seconds <= 0) return;
    left.tv_sec = (time_t)seconds;
    left.tv_nsec = (long)((seconds - (double)left.tv_sec) * 1e9);
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* FAKE_NVML_STATE: each "NAME=value" line becomes FAKE_NVML_NAME, unless already set. */
static void load_state(void) {
    const char *path = getenv("FAKE_NVML_STATE");
    char line[4096];
    char name[160];
    FILE *f;
    if (!path || !(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || !eq || eq == line) continue;
        *eq = '\0';
        snprintf(name, sizeof name, "FAKE_NVML_%.140s", line);
        setenv(name, eq + 1, 0);
    }
    fclose(f);
}

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    load_state();
    block_for(atof(env("FAKE_NVML_INIT_SLEEP", "0")));
    int code = atoi(env("FAKE_NVML_INIT_ERROR", "0"));
    if (!code) code = scripted_failure("nvmlInitWithFlags");
    if (code) return code;
    load_gpus();
    init_count++;
    return NVML_SUCCESS;
}

int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlInit(void) { return nvmlInitWithFlags(0); }

int nvmlShutdown(void) {
    int code = scripted_failure("nvmlShutdown");
    if (code) return code;
    if (init_count <= 0) return NVML_ERROR_UNINITIALIZED;
    init_count--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(int result) {
    static char buf[64];
    switch (result) {
    case 0: return "Success";
    case 999: return "Unknown Error";
    default:
        snprintf(buf, sizeof buf, "Fake NVML error %d", result);
        return buf;
    }
}

/* ------------------------------------------------------------------ system */

int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    int code = check_system("nvmlSystemGetDriverVersion");
    if (code) return code;
    return copy_string(version, length, env("FAKE_NVML_DRIVER", "580.65.06"));
}

static int cuda_version(const char *fn, int *version) {
    int code = check_system(fn);
    if (code) return code;
    if (not_supported("cuda", -1)) return NVML_ERROR_NOT_SUPPORTED;
    *version = atoi(env("FAKE_NVML_CUDA", "13000"));
    return NVML_SUCCESS;
}

int nvmlSystemGetCudaDriverVersion(int *version) {
    return cuda_version("nvmlSystemGetCudaDriverVersion", version);
}

#ifndef FAKE_NVML_OLD
int nvmlSystemGetCudaDriverVersion_v2(int *version) {
    return cuda_version("nvmlSystemGetCudaDriverVersion_v2", version);
}
#endif

int nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    char buf[128];
    int code = check_system("nvmlSystemGetNVMLVersion");
    if (code) return code;
    if (not_supported("nvmlversion", -1)) return NVML_ERROR_NOT_SUPPORTED;
    snprintf(buf, sizeof buf, "13.%s", env("FAKE_NVML_DRIVER", "580.65.06"));
    return copy_string(version, length, env("FAKE_NVML_NVML_VERSION", buf));
}

/* ------------------------------------------------------------------ devices */

int nvmlDeviceGetCount_v2(unsigned int *count) {
    int code = check_system("nvmlDeviceGetCount_v2");
    if (code) return code;
    *count = gpu_count;
    return NVML_SUCCESS;
}

int nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    int code = check_system("nvmlDeviceGetHandleByIndex_v2");
    if (code) return code;
    if (index >= gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
    if (lost(index)) return NVML_ERROR_GPU_IS_LOST;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device) {
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    int code = check_device("nvmlDeviceGetName", device);
    return code ? code : copy_string(name, length, device->name);
}

int nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    char buf[96];
    int code = check_device("nvmlDeviceGetUUID", device);
    if (code) return code;
    snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-4000-8000-%012u", device->index);
    return copy_string(uuid, length, buf);
}

int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    int code = check_device("nvmlDeviceGetCudaComputeCapability", device);
    if (code) return code;
    *major = device->major;
    *minor = device->minor;
    return NVML_SUCCESS;
}

/* used = a quarter of the memory, free = the rest */
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    int code = check_device("nvmlDeviceGetMemoryInfo", device);
    if (code) return code;
    memory->total = device->memory;
    memory->used = device->memory / 4;
    memory->free = device->memory - memory->used;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    int code = check_device("nvmlDeviceGetMemoryInfo_v2", device);
    if (code) return code;
    memory->total = device->memory;
    memory->reserved = 0;
    memory->used = device->memory / 4;
    memory->free = device->memory - memory->used;
    return NVML_SUCCESS;
}

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    int code = check_device("nvmlDeviceGetPciInfo_v3", device);
    if (code) return code;
    memset(pci, 0, sizeof *pci);
    pci->domain = 0;
    pci->bus = 0x18 + device->index;
    pci->device = 0;
    pci->pciDeviceId = 0x233010de;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

static int health(nvmlDevice_t device, const char *key, const char *fallback,
                  unsigned long long *out);

/* FAKE_NVML_PERSISTENCE_<index>, else FAKE_NVML_PERSISTENCE (default 1), NA: not supported */
int nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int *mode) {
    unsigned long long v;
    int code = check_device("nvmlDeviceGetPersistenceMode", device);
    if (code) return code;
    if (not_supported("persistence", (int)device->index)) return NVML_ERROR_NOT_SUPPORTED;
    code = health(device, "PERSISTENCE", "1", &v);
    if (!code) *mode = (int)v;
    return code;
}

#ifndef FAKE_NVML_OLD
int nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
    int code = check_device("nvmlDeviceGetMigMode", device);
    if (code) return code;
    if (not_supported("mig", (int)device->index)) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = (unsigned int)list_has_index(getenv("FAKE_NVML_MIG_GPUS"),
                                                       device->index);
    return NVML_SUCCESS;
}
#endif

/* ------------------------------------------------------------------ health */

/* The scripted value of KEY for this GPU: FAKE_NVML_KEY_<index>, FAKE_NVML_KEY, `fallback`;
 * returns NOT_SUPPORTED for "NA". */
static int health(nvmlDevice_t device, const char *key, const char *fallback,
                  unsigned long long *out) {
    char name[96];
    const char *v;
    snprintf(name, sizeof name, "FAKE_NVML_%s_%u", key, device->index);
    v = getenv(name);
    if (!v) {
        snprintf(name, sizeof name, "FAKE_NVML_%s", key);
        v = env(name, fallback);
    }
    if (strcmp(v, "NA") == 0) return NVML_ERROR_NOT_SUPPORTED;
    *out = strtoull(v, NULL, 0);
    return NVML_SUCCESS;
}

/* A device query of one scripted unsigned value. */
#define UINT_QUERY(fn, key, fallback)                                   \
    int fn(nvmlDevice_t device, unsigned int *value) {                  \
        unsigned long long v;                                           \
        int code = check_device(#fn, device);                           \
        if (!code) code = health(device, key, fallback, &v);            \
        if (!code) *value = (unsigned int)v;                            \
        return code;                                                    \
    }

UINT_QUERY(nvmlDeviceGetPowerUsage, "POWER_MW", "70000")
UINT_QUERY(nvmlDeviceGetEnforcedPowerLimit, "POWER_LIMIT_MW", "700000")
UINT_QUERY(nvmlDeviceGetCurrPcieLinkGeneration, "PCIE_GEN", "5")
UINT_QUERY(nvmlDeviceGetMaxPcieLinkGeneration, "PCIE_GEN_MAX", "5")
UINT_QUERY(nvmlDeviceGetCurrPcieLinkWidth, "PCIE_WIDTH", "16")
UINT_QUERY(nvmlDeviceGetMaxPcieLinkWidth, "PCIE_WIDTH_MAX", "16")
UINT_QUERY(nvmlDeviceGetPcieReplayCounter, "PCIE_REPLAYS", "0")
UINT_QUERY(nvmlDeviceGetRetiredPagesPendingStatus, "RETIRED_PENDING", "0")

int nvmlDeviceGetEccMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
    unsigned long long c, p;
    int code = check_device("nvmlDeviceGetEccMode", device);
    if (!code) code = health(device, "ECC_MODE", "1", &c);
    if (!code) code = health(device, "ECC_PENDING", c ? "1" : "0", &p);
    if (code) return code;
    *current = (unsigned int)c;
    *pending = (unsigned int)p;
    return NVML_SUCCESS;
}

/* errorType 0 corrected, 1 uncorrected; counterType 0 volatile, 1 aggregate */
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                unsigned long long *count) {
    static const char *keys[2][2] = {{"ECC_VOL_CORR", "ECC_AGG_CORR"},
                                     {"ECC_VOL_UNC", "ECC_AGG_UNC"}};
    int code = check_device("nvmlDeviceGetTotalEccErrors", device);
    if (code) return code;
    if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    code = health(device, "ECC_MODE", "1", count);  /* no ECC: no counters */
    if (code) return code;
    return health(device, keys[errorType][counterType], "0", count);
}

/* cause 0 multiple single-bit errors, 1 double-bit error; addresses 0x1000, 0x2000, … */
int nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *pageCount,
                              unsigned long long *addresses) {
    unsigned long long n;
    int code = check_device("nvmlDeviceGetRetiredPages", device);
    if (!code) code = health(device, cause ? "RETIRED_DBE" : "RETIRED_SBE", "0", &n);
    if (code) return code;
    if (!addresses || *pageCount < n) {
        *pageCount = (unsigned int)n;
        return n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
    }
    for (unsigned long long i = 0; i < n; i++) addresses[i] = 0x1000 * (i + 1);
    *pageCount = (unsigned int)n;
    return NVML_SUCCESS;
}

int nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                              unsigned int *uncRows, unsigned int *isPending,
                              unsigned int *failureOccurred) {
    unsigned long long c, u, p, f;
    int code = check_device("nvmlDeviceGetRemappedRows", device);
    if (!code) code = health(device, "REMAP_CORR", "0", &c);
    if (!code) code = health(device, "REMAP_UNC", "0", &u);
    if (!code) code = health(device, "REMAP_PENDING", "0", &p);
    if (!code) code = health(device, "REMAP_FAILURE", "0", &f);
    if (code) return code;
    *corrRows = (unsigned int)c;
    *uncRows = (unsigned int)u;
    *isPending = (unsigned int)p;
    *failureOccurred = (unsigned int)f;
    return NVML_SUCCESS;
}

static int clock_events(const char *fn, nvmlDevice_t device, unsigned long long *reasons) {
    int code = check_device(fn, device);
    return code ? code : health(device, "CLOCK_EVENTS", "0x1", reasons);
}

#ifndef FAKE_NVML_OLD
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
    return clock_events("nvmlDeviceGetCurrentClocksEventReasons", device, reasons);
}
#endif

int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons) {
    return clock_events("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons);
}

/* sensor 0 = the GPU die */
int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp) {
    unsigned long long v;
    int code = check_device("nvmlDeviceGetTemperature", device);
    if (!code && sensor != 0) code = NVML_ERROR_INVALID_ARGUMENT;
    if (!code) code = health(device, "TEMP", "35", &v);
    if (!code) *temp = (unsigned int)v;
    return code;
}

#ifndef FAKE_NVML_OLD
/* nvmlTemperature_v1_t: the versioned query that replaces nvmlDeviceGetTemperature */
typedef struct {
    unsigned int version;
    int sensorType;
    int temperature;
} nvmlTemperature_v1_t;

#define NVML_TEMPERATURE_V1 (unsigned int)(sizeof(nvmlTemperature_v1_t) | (1u << 24))

int nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temp) {
    unsigned long long v;
    int code = check_device("nvmlDeviceGetTemperatureV", device);
    if (code) return code;
    if (temp->version != NVML_TEMPERATURE_V1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temp->sensorType != 0) return NVML_ERROR_INVALID_ARGUMENT;
    code = health(device, "TEMP", "35", &v);
    if (!code) temp->temperature = (int)v;
    return code;
}
#endif

/* threshold 0 shutdown, 1 slowdown */
int nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int threshold, unsigned int *temp) {
    unsigned long long v;
    int code = check_device("nvmlDeviceGetTemperatureThreshold", device);
    if (!code && threshold != 0 && threshold != 1) code = NVML_ERROR_NOT_SUPPORTED;
    if (!code) code = health(device, threshold ? "TEMP_SLOWDOWN" : "TEMP_SHUTDOWN",
                             threshold ? "87" : "92", &v);
    if (!code) *temp = (unsigned int)v;
    return code;
}

/* 0 Default, 2 Prohibited, 3 Exclusive_Process */
UINT_QUERY(nvmlDeviceGetComputeMode, "COMPUTE_MODE", "0")

/* ------------------------------------------------------------------ recovery, fabric, processes */

/* nvmlFieldValue_t as pynvml declares it (c_nvmlFieldValue_t) */
typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    unsigned int valueType;
    unsigned int nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        long long sllVal;
        int siVal;
        unsigned short usVal;
    } value;
} nvmlFieldValue_t;

#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230

/* Only the recovery action (RECOVERY_ACTION, default 0 None; NA: NOT_SUPPORTED in that
 * field, as a driver before it returns); any other field is NOT_SUPPORTED. */
int nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t *values) {
    int code = check_device("nvmlDeviceGetFieldValues", device);
    if (code) return code;
    for (int i = 0; i < count; i++) {
        unsigned long long v = 0;
        values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        if (values[i].fieldId != NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) continue;
        values[i].nvmlReturn = (unsigned int)health(device, "RECOVERY_ACTION", "0", &v);
        values[i].valueType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
        values[i].value.uiVal = (unsigned int)v;
    }
    return NVML_SUCCESS;
}

/* nvmlGpuFabricInfo_t as pynvml declares it (state a c_uint) */
typedef struct {
    unsigned char clusterUuid[16];
    unsigned int status;
    unsigned int cliqueId;
    unsigned int state;
} nvmlGpuFabricInfo_t;

/* FABRIC_STATE (default 0: no NVSwitch; 1 not started, 2 in progress, 3 completed),
 * FABRIC_STATUS (an nvmlReturn_t, default 0 success) */
int nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info) {
    unsigned long long state = 0, status = 0;
    int code = check_device("nvmlDeviceGetGpuFabricInfo", device);
    if (!code) code = health(device, "FABRIC_STATE", "0", &state);
    if (!code) code = health(device, "FABRIC_STATUS", "0", &status);
    if (code) return code;
    memset(info, 0, sizeof *info);
    info->state = (unsigned int)state;
    info->status = (unsigned int)status;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
/* nvmlGpuFabricInfo_v2_t / _v3_t as nvml.h declares them: the state is an unsigned char (pynvml
 * reads it as a c_uint, so the padding after it must not leak into the value) */
typedef struct {
    unsigned int version;
    unsigned char clusterUuid[16];
    unsigned int status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
    unsigned char healthSummary; /* v3 only */
} nvmlGpuFabricInfo_v3_t;

#define FABRIC_V2 (unsigned int)(36u | (2u << 24)) /* up to healthMask */
#define FABRIC_V3 (unsigned int)(sizeof(nvmlGpuFabricInfo_v3_t) | (3u << 24))

int nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t *info) {
    unsigned long long state = 0, status = 0, mask = 0, summary = 1, newest = 3;
    unsigned int version;
    int code = check_device("nvmlDeviceGetGpuFabricInfoV", device);
    if (!code) code = health(device, "FABRIC_VERSION", "3", &newest);
    if (code) return code;
    version = info->version;
    if (version != FABRIC_V2 && (version != FABRIC_V3 || newest < 3))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (!code) code = health(device, "FABRIC_STATE", "0", &state);
    if (!code) code = health(device, "FABRIC_STATUS", "0", &status);
    if (!code) code = health(device, "FABRIC_HEALTH_MASK", "0", &mask);
    if (!code) code = health(device, "FABRIC_SUMMARY", "1", &summary);
    if (code) return code;
    memset(info, 0xAB, version == FABRIC_V3 ? sizeof *info : 36u); /* padding: garbage */
    info->version = version;
    memset(info->clusterUuid, 0, sizeof info->clusterUuid);
    info->state = (unsigned char)state;
    info->status = (unsigned int)status;
    info->cliqueId = 0;
    info->healthMask = (unsigned int)mask;
    if (version == FABRIC_V3) info->healthSummary = (unsigned char)summary;
    return NVML_SUCCESS;
}
#endif

/* nvmlProcessInfo_t (v2/v3 layout): 24 bytes, as drivers from 535.98 on write it */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "drivers >= 535.98 write 24-byte entries");

/* PROCS="pid:bytes:C,pid:NA:G" (bytes NA: NVML_VALUE_NOT_AVAILABLE, as under WDDM); the
 * processes of `type` ('C' compute, 'G' graphics); the value NA: NOT_SUPPORTED. */
static int processes(const char *fn, nvmlDevice_t device, char type, unsigned int *count,
                     nvmlProcessInfo_t *infos) {
    char name[96];
    const char *spec;
    unsigned int n = 0;
    int code = check_device(fn, device);
    if (code) return code;
    snprintf(name, sizeof name, "FAKE_NVML_PROCS_%u", device->index);
    spec = getenv(name);
    if (!spec) spec = env("FAKE_NVML_PROCS", "");
    if (strcmp(spec, "NA") == 0) return NVML_ERROR_NOT_SUPPORTED;
    for (const char *p = spec; p && *p;) {
        char *end;
        unsigned long pid = strtoul(p, &end, 10);
        unsigned long long used = ~0ULL;
        const char *colon = strchr(p, ':');
        const char *next = strchr(p, ',');
        if (colon && (!next || colon < next)) {
            if (strncmp(colon + 1, "NA", 2) != 0) used = strtoull(colon + 1, &end, 0);
            const char *kind = strchr(colon + 1, ':');
            char t = (kind && (!next || kind < next)) ? kind[1] : 'C';
            if (t == type) {
                if (infos && n < *count) {
                    infos[n].pid = (unsigned int)pid;
                    infos[n].usedGpuMemory = used;
                    infos[n].gpuInstanceId = 0xFFFFFFFFu;
                    infos[n].computeInstanceId = 0xFFFFFFFFu;
                }
                n++;
            }
        }
        p = next ? next + 1 : NULL;
    }
    if (!infos || n > *count) {
        *count = n;
        return n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
    }
    *count = n;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                            nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetComputeRunningProcesses_v3", device, 'C', count, infos);
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                             nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetGraphicsRunningProcesses_v3", device, 'G', count, infos);
}
#endif

int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                            nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetComputeRunningProcesses_v2", device, 'C', count, infos);
}

int nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                             nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetGraphicsRunningProcesses_v2", device, 'G', count, infos);
}
