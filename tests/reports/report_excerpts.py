# ruff: noqa: E501, W291 - real outputs, kept verbatim: long lines and trailing blanks included
"""Small real excerpts of reports as posted, each with its link. Cut where the source was cut
(the search snapshot, or our own trimming of long outputs); nothing is edited inside a line.

The full corpus of real reports (with expected verdicts) lives in tests/fixtures/reports/.
"""

from __future__ import annotations

# https://github.com/oobabooga/textgen/issues/726 — RTX 4090, torch 2.0.0 (CUDA 11.7), driver
# 530.30.02; cut off in the CPU section (no "Versions of relevant libraries").
COLLECT_ENV_4090_CU117 = """\
Collecting environment information...
PyTorch version: 2.0.0
Is debug build: False
CUDA used to build PyTorch: 11.7
ROCM used to build PyTorch: N/A

OS: Ubuntu 20.04.6 LTS (x86_64)
GCC version: (Ubuntu 7.5.0-6ubuntu2) 7.5.0
Clang version: Could not collect
CMake version: version 3.26.1
Libc version: glibc-2.31

Python version: 3.10.9 (main, Mar  8 2023, 10:47:38) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-5.15.0-69-generic-x86_64-with-glibc2.31
Is CUDA available: True
CUDA runtime version: 11.7.64
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
Nvidia driver version: 530.30.02
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_adv_infer.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_adv_train.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_cnn_train.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.0.5
/usr/lib/x86_64-linux-gnu/libcudnn_ops_train.so.8.0.5
HIP runtime version: N/A
MIOpen runtime version: N/A
Is XNNPACK available: True

CPU:
"""

# https://github.com/vllm-project/vllm/pull/9293 — WSL2, RTX 4070 Laptop, torch 2.4.0+cu121,
# Windows driver 551.88; cut off in the CPU section.
COLLECT_ENV_WSL_4070 = """\
Collecting environment information...
PyTorch version: 2.4.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.2 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Clang version: 14.0.0-1ubuntu1.1
CMake version: version 3.30.2
Libc version: glibc-2.35

Python version: 3.12.3 | packaged by Anaconda, Inc. | (main, May  6 2024, 19:46:43) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35
Is CUDA available: True
CUDA runtime version: 12.4.131
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4070 Laptop GPU
Nvidia driver version: 551.88
cuDNN version: Could not collect
HIP runtime version: N/A
MIOpen runtime version: N/A
Is XNNPACK available: True

CPU:
Architecture:                       x86_64
"""

# https://github.com/pytorch/pytorch/pull/44106 — a ROCm build (complete, with the pip list).
COLLECT_ENV_ROCM = """\
Collecting environment information...
PyTorch version: 1.7.0a0+9ddd3df
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 3.7.20315-077bcfa0

OS: Ubuntu 18.04.4 LTS (x86_64)
GCC version: (Ubuntu 7.5.0-3ubuntu1~18.04) 7.5.0
Clang version: 11.0.0 (/src/external/llvm-project/clang ee4e4ebbadcc8ea14ce99e34ed31ab31e94827ac)
CMake version: version 3.14.0

Python version: 3.6 (64-bit runtime)
Is CUDA available: True
CUDA runtime version: N/A
GPU models and configuration: Device 66a1
Nvidia driver version: Could not collect
cuDNN version: N/A
HIP runtime version: 3.18.2
MIOpen runtime version: 2.6.0

Versions of relevant libraries:
[pip3] numpy==1.18.5
[pip3] torch==1.7.0a0+a9603c7
[pip3] torchvision==0.8.0a0+a4736ea
[conda] blas                      1.0                         mkl
"""

# https://github.com/pytorch/pytorch/pull/137846 — a CPU build on Windows, no NVIDIA stack:
# the GPU fields say "No CUDA"; cut off in the CPU section.
COLLECT_ENV_WINDOWS_CPU = """\
Collecting environment information...
PyTorch version: 2.8.0.dev20250528+cpu
Is debug build: False
CUDA used to build PyTorch: None
ROCM used to build PyTorch: N/A

OS: Microsoft Windows 11 Enterprise (10.0.22631 64-bit)
GCC version: Could not collect
Clang version: Could not collect
CMake version: Could not collect
Libc version: N/A

Python version: 3.10.17 | packaged by conda-forge | (main, Apr 10 2025, 22:06:35) [MSC v.1943 64 bit (AMD64)] (64-bit runtime)
Python platform: Windows-10-10.0.22631-SP0
Is CUDA available: False
CUDA runtime version: No CUDA
CUDA_MODULE_LOADING set to: N/A
GPU models and configuration: No CUDA
Nvidia driver version: No CUDA
cuDNN version: No CUDA
Is XPU available: False
HIP runtime version: N/A
MIOpen runtime version: N/A
Is XNNPACK available: True

CPU:
"""

# https://github.com/pytorch/pytorch/issues/150733 — RTX 5090 D (sm_120) with torch
# 2.6.0+cu126, whose arch list torch's own warning prints; the search snapshot cuts it off in
# the middle of the cuDNN list.
COLLECT_ENV_5090_CU126 = """\
Collecting environment information...
/home/mm/anaconda3/envs/py312/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning: 
NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
If you want to use the NVIDIA GeForce RTX 5090 D GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/

  warnings.warn(
PyTorch version: 2.6.0+cu126
Is debug build: False
CUDA used to build PyTorch: 12.6
ROCM used to build PyTorch: N/A

OS: Ubuntu 24.10 (x86_64)
GCC version: (Ubuntu 14.2.0-4ubuntu2) 14.2.0
Clang version: Could not collect
CMake version: Could not collect
Libc version: glibc-2.40

Python version: 3.12.9 | packaged by Anaconda, Inc. | (main, Feb  6 2025, 18:56:27) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-6.11.0-21-generic-x86_64-with-glibc2.40
Is CUDA available: True
CUDA runtime version: Could not collect
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090 D
Nvidia driver version: 570.124.04
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.9.8.0
/usr/lib/x"""

# https://github.com/leptonai/gpud/blob/8ddf848ef5b37d52f66fe71a20a6449ea0e10551/e2e/mock/nvidia-smi/test_data.go
# (NormalSMIOutput) — driver 550 table, one A10.
TABLE_550_A10 = """\
Wed Jan 22 04:28:25 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A10                     On  |   00000000:06:00.0 Off |                    0 |
|  0%   32C    P8             21W /  150W |       1MiB /  23028MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
"""

# https://github.com/Azure/azhpc-diagnostics/blob/97226a1202cf031230d4eb979495f9a33fcbaba2/Linux/test/samples/nvidia-smi-inforom.out
# — driver 460 table (the narrow pre-525 layout, names cut with "..."); the first two of eight
# V100s, then cut off mid-way through the third.
TABLE_460_V100_CUT = """\
Fri Jun 11 19:27:00 2021       
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 460.32.03    Driver Version: 460.32.03    CUDA Version: 11.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  Off  | 00000001:00:00.0 Off |                    0 |
| N/A   40C    P0    43W / 300W |      0MiB / 32510MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-SXM2...  Off  | 00000002:00:00.0 Off |                    0 |
| N/A   40C    P0    43W / 300W |      0MiB / 32510MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
|   2  Tesla V100-SXM2...  Off  | 00000003:00:00.0 Off |                    0 |
"""

# https://github.com/cBio/cbio-cluster/issues/38 — driver 331 (2014): no "CUDA Version" in the
# banner, two rows per GPU; cut off by the search snapshot.
TABLE_331_GTX680 = """\
[chodera@gpu-1-12 ~]$ nvidia-smi
Fri Apr 18 12:26:18 2014       
+------------------------------------------------------+                       
| NVIDIA-SMI 331.62     Driver Version: 331.62         |                       
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 680     Off  | 0000:03:00.0     N/A |                  N/A |
| 30%   35C  N/A     N/A /  N/A |      9MiB /  4095MiB |     N/A      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX 680     Off  | 0000:04:00.0     N/A |                  N/A |
| 30%   35C  N/A     N/A /  N/A |      9MiB /  4095MiB |     N/A      Default |
+-------------------------------+----------------------+----------------------+
|   2  GeForce GTX 680     Off  | 0000:83:00.0     N/A |                  N/A |
| 30%   34C  N/A     N/A /  N/A |      9MiB /  4095MiB |     N/A      Default |
+-"""

# https://github.com/lyulyul/shine-cluster/issues/50 — the driver's kernel module not loaded.
SMI_FAILED = """\
$ nvidia-smi
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.
"""

# https://github.com/qixuema/envs/issues/4 — the same error, pasted with a curly apostrophe.
SMI_FAILED_CURLY = """\
NVIDIA-SMI has failed because it couldn‘t communicate with the NVIDIA driver.
Make sure that the latest NVIDIA driver is installed and running.
"""

# https://github.com/intel/llvm/issues/17614 — user-space library and kernel module differ.
SMI_MISMATCH = """\
**********CUDA Version**********
Failed to initialize NVML: Driver/library version mismatch
NVML library version: 550.144
"""


# --- the kernel module's messages (gpudoctor.reports.kernel_log), each as its thread has it

# https://github.com/stackhpc/ansible-slurm-appliance/issues/287 — syslog writes the message's
# newlines as "#012"; fixed by a reboot.
NVRM_API_MISMATCH_SYSLOG = """\
TASK [cuda : Enable NVIDIA Persistence Daemon] *****************************
Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: components have the same version.
"""

# https://github.com/Frogging-Family/nvidia-all/issues/394 — the newer wording, naming the
# client; dmesg's continuation lines indented.
NVRM_API_MISMATCH_CLIENT = """\
[    8.805842] r8169 0000:83:00.0: invalid VPD tag 0xff (size 0) at offset 0; assume missing optional EEPROM
[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)
               NVRM: has the version 595.84, but this kernel module has
               NVRM: the version 595.80.  Please make sure that this
               NVRM: kernel module and all NVIDIA driver components
               NVRM: have the same version.
"""

# https://github.com/nvidiavgpuarchive/index/issues/1 — every line with dmesg's timestamp.
NVRM_API_MISMATCH_STAMPED = """\
root@plex:~# dmesg | grep NVRM
[    6.252567] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 11:36:21 UTC 2025
[    6.860482] NVRM: GPU at 0000:01:00.0 has software scheduler ENABLED with policy BEST_EFFORT.
[ 8957.099615] NVRM: API mismatch: the client has the version 570.148.08, but
[ 8957.099615] NVRM: this kernel module has the version 570.148.06.  Please
[ 8957.099615] NVRM: make sure that this kernel module and all NVIDIA driver
[ 8957.099615] NVRM: components have the same version.
"""

# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789 — an RTX 3090 the driver
# could not start (GSP firmware); nvidia-smi said "No devices were found".
NVRM_INIT_FAILED = """\
[  903.609564] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM
[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)
[  903.611884] NVRM: GPU 0000:98:00.0: rm_init_adapter failed, device minor number 0
"""

# https://github.com/Bumblebee-Project/Bumblebee/issues/722 — the old wording, without the GPU.
NVRM_INIT_FAILED_OLD = """\
[87669.726564] NVRM: RmInitAdapter failed! (0x26:0xffff:1375)
[87669.726572] NVRM: rm_init_adapter failed for device bearing minor number 0
[87669.726589] NVRM: nvidia_frontend_open: minor 0, module->open() failed, error -5
"""

# Not a paste: the shape of pytorch/pytorch's bug template, built of the excerpts above: prose,
# a trace, "### Versions" and a fenced collect_env; a reply below adds nvidia-smi inside
# <details>, in a fence with a language
ISSUE = f"""### 🐛 Describe the bug

Training crashes on my RTX 4090:

```python
import torch
torch.zeros(1).cuda()
```

### Versions

```
{COLLECT_ENV_4090_CU117}```

<details>
<summary>nvidia-smi</summary>

```text
{TABLE_550_A10}```

</details>
"""
