"""Which NVML call brings libcuda (and its memory) into a process? Read-only NVML getters only.

Prints, after each step, whether libcuda is mapped and the process RSS (kB)."""
import pynvml as n


def state(label):
    maps = open("/proc/self/maps").read()
    rss = [l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]
    print(f"{label:40s} libcuda={'libcuda' in maps} rss_kb={rss}", flush=True)


state("start")
n.nvmlInit()
state("nvmlInit")
h = n.nvmlDeviceGetHandleByIndex(0)
state("GetHandleByIndex")
steps = [
    ("name", lambda: n.nvmlDeviceGetName(h)),
    ("uuid", lambda: n.nvmlDeviceGetUUID(h)),
    ("pci", lambda: n.nvmlDeviceGetPciInfo(h)),
    ("memory", lambda: n.nvmlDeviceGetMemoryInfo(h)),
    ("utilization", lambda: n.nvmlDeviceGetUtilizationRates(h)),
    ("temperature", lambda: n.nvmlDeviceGetTemperature(h, 0)),
    ("power usage", lambda: n.nvmlDeviceGetPowerUsage(h)),
    ("enforced limit", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h)),
    ("limit constraints", lambda: n.nvmlDeviceGetPowerManagementLimitConstraints(h)),
    ("default limit", lambda: n.nvmlDeviceGetPowerManagementDefaultLimit(h)),
    ("clock sm", lambda: n.nvmlDeviceGetClockInfo(h, 1)),
    ("max clock sm", lambda: n.nvmlDeviceGetMaxClockInfo(h, 1)),
    ("pstate", lambda: n.nvmlDeviceGetPerformanceState(h)),
    ("throttle reasons", lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
    ("temp threshold", lambda: n.nvmlDeviceGetTemperatureThreshold(h, 1)),
    ("ecc", lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0)),
    ("pages pending", lambda: n.nvmlDeviceGetRetiredPagesPendingStatus(h)),
    ("persistence", lambda: n.nvmlDeviceGetPersistenceMode(h)),
    ("compute procs", lambda: n.nvmlDeviceGetComputeRunningProcesses(h)),
    ("driver version", lambda: n.nvmlSystemGetDriverVersion()),
    ("cuda version", lambda: n.nvmlSystemGetCudaDriverVersion()),
]
for label, call in steps:
    try:
        call()
    except Exception as e:  # a getter a card does not support is fine here
        label += f" ({type(e).__name__})"
    state(label)
