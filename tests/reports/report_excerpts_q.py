# ruff: noqa: E501 - real outputs, kept verbatim: long lines included
"""Real `nvidia-smi -q` and `-q -x` excerpts, each with its link (see report_excerpts.py)."""

from __future__ import annotations

# https://github.com/Azure/azhpc-diagnostics/blob/006538315caa5c3842bb165f41582ef5bcfaebe2/Linux/test/samples/nvidia-smi-q.out
# — driver 460, A100-SXM4-40GB ("Clocks Throttle Reasons", "Ecc Mode", SRAM/DRAM counters,
# remapped rows); the first of its eight GPUs, up to that GPU's last line.
Q_460_A100 = """\

==============NVSMI LOG==============

Timestamp                                 : Mon Oct 25 22:06:14 2021
Driver Version                            : 460.32.03
CUDA Version                              : 11.2

Attached GPUs                             : 8
GPU 00000001:00:00.0
    Product Name                          : A100-SXM4-40GB
    Product Brand                         : Tesla
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Disabled
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : 1323120035212
    GPU UUID                              : GPU-b01e9f90-c60c-4ad1-2052-154833662357
    Minor Number                          : 0
    VBIOS Version                         : 92.00.36.00.04
    MultiGPU Board                        : No
    Board ID                              : 0x10000
    GPU Part Number                       : 692-2G506-0200-000
    Inforom Version
        Image Version                     : G506.0200.00.04
        OEM Object                        : 2.0
        ECC Object                        : 6.16
        Power Management Object           : N/A
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GPU Virtualization Mode
        Virtualization Mode               : Pass-Through
        Host VGPU Mode                    : N/A
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0x00
        Device                            : 0x00
        Domain                            : 0x0001
        Device Id                         : 0x20B010DE
        Bus Id                            : 00000001:00:00.0
        Sub System Id                     : 0x134F10DE
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
            Link Width
                Max                       : 16x
                Current                   : 16x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : 0
        Replay Number Rollovers           : 0
        Tx Throughput                     : 0 KB/s
        Rx Throughput                     : 0 KB/s
    Fan Speed                             : N/A
    Performance State                     : P0
    Clocks Throttle Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    FB Memory Usage
        Total                             : 40536 MiB
        Used                              : 0 MiB
        Free                              : 40536 MiB
    BAR1 Memory Usage
        Total                             : 65536 MiB
        Used                              : 1 MiB
        Free                              : 65535 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : 0 %
        Memory                            : 0 %
        Encoder                           : 0 %
        Decoder                           : 0 %
    Encoder Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    FBC Stats
        Active Sessions                   : 0
        Average FPS                       : 0
        Average Latency                   : 0
    Ecc Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 640 bank(s)
            High                          : 0 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 41 C
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 85 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : 40 C
        Memory Max Operating Temp         : 95 C
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 55.63 W
        Power Limit                       : 400.00 W
        Default Power Limit               : 400.00 W
        Enforced Power Limit              : 400.00 W
        Min Power Limit                   : 100.00 W
        Max Power Limit                   : 400.00 W
    Clocks
        Graphics                          : 210 MHz
        SM                                : 210 MHz
        Memory                            : 1215 MHz
        Video                             : 585 MHz
    Applications Clocks
        Graphics                          : 1095 MHz
        Memory                            : 1215 MHz
    Default Applications Clocks
        Graphics                          : 1095 MHz
        Memory                            : 1215 MHz
    Max Clocks
        Graphics                          : 1410 MHz
        SM                                : 1410 MHz
        Memory                            : 1215 MHz
        Video                             : 1290 MHz
    Max Customer Boost Clocks
        Graphics                          : 1410 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Processes                             : None
"""

# https://github.com/leptonai/gpud/blob/8ddf848ef5b37d52f66fe71a20a6449ea0e10551/e2e/mock/nvidia-smi/test_data.go
# (HWSlowdownQueryOutput) — driver 550 ("Clocks Event Reasons"), HW Slowdown and HW Power Brake
# Slowdown active; cut off by us after the clock-event reasons.
Q_550_A10_HW_SLOWDOWN_CUT = """\

==============NVSMI LOG==============

Timestamp                                 : Wed Jan 22 04:28:41 2025
Driver Version                            : 550.127.05
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:06:00.0
    Product Name                          : NVIDIA A10
    Product Brand                         : NVIDIA
    Product Architecture                  : Ampere
    Display Mode                          : Enabled
    Display Active                        : Disabled
    Persistence Mode                      : Enabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : N/A
        Pending                           : N/A
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : 1324722021038
    GPU UUID                              : GPU-51ae0086-e1ac-4a20-f062-9caa44e4df6d
    Minor Number                          : 0
    VBIOS Version                         : 94.02.91.00.03
    PCI
        Bus                               : 0x06
        Device                            : 0x00
        Domain                            : 0x0000
        Base Classcode                    : 0x3
        Sub Classcode                     : 0x2
        Device Id                         : 0x223610DE
        Bus Id                            : 00000000:06:00.0
    Fan Speed                             : 0 %
    Performance State                     : P8
    Clocks Event Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    Sparse Operation Mode                 : N/A
    FB Memory Usage
        Total                             : 23028 MiB
        Reserved                          : 526 MiB
"""

# https://github.com/NVIDIA/nvidia-docker/issues/954 — driver 396: no "CUDA Version" line;
# cut off by the search snapshot.
Q_396_GTX1080_CUT = """\
==============NVSMI LOG==============

Timestamp                           : Sun Apr 14 18:55:20 2019
Driver Version                      : 396.54

Attached GPUs                       : 1
GPU 00000000:01:00.0
    Product Name                    : GeForce GTX 1080
    Product Brand                   : GeForce
    Display Mode                    : Enabled
    Display Active                  : Enabled
    Persistence Mode                : Disabled
    Accounting Mode                 : Disabled
    Accounting Mode Buffer Size     : 4000
    Driver Model
        Current                     : N/A
        Pending                     : N/A
    Serial Number                   : N/A
    GPU UUID                        : GPU-0200523e-f473-3a45-9b4a-fbbe0e41ccf8
"""

# https://github.com/netdata/netdata/issues/15755 — `nvidia-smi -q -x`, driver 535, RTX 4090;
# the comment's XML, cut off after <driver_model>.
QX_535_4090_CUT = """\
<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
        <timestamp>Mon Aug  7 11:10:06 2023</timestamp>
        <driver_version>535.86.05</driver_version>
        <cuda_version>12.2</cuda_version>
        <attached_gpus>1</attached_gpus>
        <gpu id="00000000:84:00.0">
                <product_name>NVIDIA GeForce RTX 4090</product_name>
                <product_brand>GeForce</product_brand>
                <product_architecture>Ada Lovelace</product_architecture>
                <display_mode>Disabled</display_mode>
                <display_active>Disabled</display_active>
                <persistence_mode>Enabled</persistence_mode>
                <addressing_mode>None</addressing_mode>
                <mig_mode>
                        <current_mig>N/A</current_mig>
                        <pending_mig>N/A</pending_mig>
                </mig_mode>
                <mig_devices>
                        None
                </mig_devices>
                <accounting_mode>Disabled</accounting_mode>
                <accounting_mode_buffer_size>4000</accounting_mode_buffer_size>
                <driver_model>
                        <current_dm>N/A</current_dm>
                        <pending_dm>N/A</pending_dm>"""

# https://github.com/Checkmk/checkmk/blob/8ef3ba864fcbdf12365e1f62869ada30b6cb9bfd/tests/unit-shell/agents/plugins/test_nvidia_smi.sh
# — `nvidia-smi -q -x`, driver 535, A100-SXM4-80GB with MIG enabled and remapped rows "N/A";
# the MIG devices, clocks and power sections left out by us (whole elements, nothing inside one
# changed), cut off after </remapped_rows>.
QX_535_A100_MIG_CUT = """\
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
    <timestamp>Fri Aug  4 11:44:30 2023</timestamp>
    <driver_version>535.54.03</driver_version>
    <cuda_version>12.2</cuda_version>
    <attached_gpus>4</attached_gpus>
    <gpu id="00000000:01:00.0">
        <product_name>NVIDIA A100-SXM4-80GB</product_name>
        <product_brand>NVIDIA</product_brand>
        <product_architecture>Ampere</product_architecture>
        <display_mode>Enabled</display_mode>
        <display_active>Disabled</display_active>
        <persistence_mode>Disabled</persistence_mode>
        <addressing_mode>None</addressing_mode>
        <mig_mode>
            <current_mig>Enabled</current_mig>
            <pending_mig>Enabled</pending_mig>
        </mig_mode>
        <uuid>GPU-513536b6-7d19-9063-b049-1e69664bb298</uuid>
        <pci>
            <pci_bus>01</pci_bus>
            <pci_device>00</pci_device>
            <pci_domain>0000</pci_domain>
            <pci_device_id>20B210DE</pci_device_id>
            <pci_bus_id>00000000:01:00.0</pci_bus_id>
            <pci_sub_system_id>147F10DE</pci_sub_system_id>
        </pci>
        <clocks_event_reasons>
            <clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
            <clocks_event_reason_applications_clocks_setting>Not Active</clocks_event_reason_applications_clocks_setting>
            <clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>
            <clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>
            <clocks_event_reason_hw_thermal_slowdown>Not Active</clocks_event_reason_hw_thermal_slowdown>
            <clocks_event_reason_hw_power_brake_slowdown>Not Active</clocks_event_reason_hw_power_brake_slowdown>
            <clocks_event_reason_sync_boost>Not Active</clocks_event_reason_sync_boost>
            <clocks_event_reason_sw_thermal_slowdown>Not Active</clocks_event_reason_sw_thermal_slowdown>
            <clocks_event_reason_display_clocks_setting>Not Active</clocks_event_reason_display_clocks_setting>
        </clocks_event_reasons>
        <fb_memory_usage>
            <total>81920 MiB</total>
            <reserved>869 MiB</reserved>
            <used>50 MiB</used>
            <free>80999 MiB</free>
        </fb_memory_usage>
        <ecc_mode>
            <current_ecc>Enabled</current_ecc>
            <pending_ecc>Enabled</pending_ecc>
        </ecc_mode>
        <ecc_errors>
            <volatile>
                <sram_correctable>0</sram_correctable>
                <sram_uncorrectable>0</sram_uncorrectable>
                <dram_correctable>0</dram_correctable>
                <dram_uncorrectable>0</dram_uncorrectable>
            </volatile>
            <aggregate>
                <sram_correctable>0</sram_correctable>
                <sram_uncorrectable>0</sram_uncorrectable>
                <dram_correctable>0</dram_correctable>
                <dram_uncorrectable>0</dram_uncorrectable>
            </aggregate>
        </ecc_errors>
        <retired_pages>
            <multiple_single_bit_retirement>
                <retired_count>N/A</retired_count>
                <retired_pagelist>N/A</retired_pagelist>
            </multiple_single_bit_retirement>
            <double_bit_retirement>
                <retired_count>N/A</retired_count>
                <retired_pagelist>N/A</retired_pagelist>
            </double_bit_retirement>
            <pending_blacklist>N/A</pending_blacklist>
            <pending_retirement>N/A</pending_retirement>
        </retired_pages>
        <remapped_rows>N/A</remapped_rows>
"""
