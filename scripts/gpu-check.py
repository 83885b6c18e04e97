#!/usr/bin/env python3
"""One prepared check of erg's GPU assumptions on a machine with a real NVIDIA GPU (issue 13 §6).

Run it on such a machine (Python 3 with PyTorch and nvidia-smi; no Node.js needed), from the
repository root:

    python3 scripts/gpu-check.py --seconds 40 --out /tmp/gpu-check.json [--set-power-limit W]

What it measures, under a real PyTorch load (matrix multiplications on GPU 0) for --seconds:
  1. integrated GPU power against the NVML energy counter, as erg's agent reads them
     (nvmlDeviceGetPowerUsage sampled every --interval-ms and integrated with the trapezoid rule;
     nvmlDeviceGetTotalEnergyConsumption at both ends): the difference in %;
  2. what the agent records of the state in force: enforced power limit, SM and applications
     clocks, temperature, the clocks-event reasons bitmask (min/max/last over the load);
  3. with --set-power-limit, the node helper's own script (deploy/node-helper/erg-power-helper
     hold, with a config beside a temporary copy pointing at the real nvidia-smi) sets that limit,
     the check reads the enforced limit while it holds, signals it, and reads the restored limit.
     Needs root; without it, or when the driver refuses, it says so and goes on.

It prints a summary and writes every figure as JSON to --out. NVML is called through ctypes
(libnvidia-ml.so.1), so nothing beyond PyTorch needs installing.
"""
import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

NVML_SUCCESS = 0


class Nvml:
    """The NVML calls erg's agent makes, through ctypes."""

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._check(self.lib.nvmlInit_v2(), "nvmlInit_v2")

    def _check(self, rc, what):
        if rc != NVML_SUCCESS:
            raise RuntimeError(f"{what}: NVML error {rc}")

    def handle(self, index):
        h = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(h)), "nvmlDeviceGetHandleByIndex_v2")
        return h

    def _uint(self, fn, h, *args):
        v = ctypes.c_uint()
        rc = getattr(self.lib, fn)(h, *args, ctypes.byref(v))
        return v.value if rc == NVML_SUCCESS else None

    def name(self, h):
        buf = ctypes.create_string_buffer(96)
        return buf.value.decode() if self.lib.nvmlDeviceGetName(h, buf, 96) == NVML_SUCCESS else None

    def driver(self):
        buf = ctypes.create_string_buffer(96)
        return buf.value.decode() if self.lib.nvmlSystemGetDriverVersion(buf, 96) == NVML_SUCCESS else None

    def energy_mj(self, h):
        v = ctypes.c_ulonglong()
        return v.value if self.lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(v)) == NVML_SUCCESS else None

    def power_mw(self, h):
        return self._uint("nvmlDeviceGetPowerUsage", h)

    def enforced_limit_mw(self, h):
        return self._uint("nvmlDeviceGetEnforcedPowerLimit", h)

    def sm_clock(self, h):
        return self._uint("nvmlDeviceGetClockInfo", h, ctypes.c_int(1))

    def app_clock(self, h):
        return self._uint("nvmlDeviceGetApplicationsClock", h, ctypes.c_int(0))

    def temp(self, h):
        return self._uint("nvmlDeviceGetTemperature", h, ctypes.c_int(0))

    def clock_events(self, h):
        v = ctypes.c_ulonglong()
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            f = getattr(self.lib, fn, None)
            if f is not None and f(h, ctypes.byref(v)) == NVML_SUCCESS:
                return v.value
        return None


def load(stop, seconds):
    """Keeps GPU 0 busy with half-precision matrix multiplications until `stop` or `seconds`."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    end = time.time() + seconds
    while not stop.is_set() and time.time() < end:
        for _ in range(20):
            a = a @ b
            a = a / a.norm()
        torch.cuda.synchronize()


def trapezoid(ts, vs):
    return sum((ts[i] - ts[i - 1]) * (vs[i] + vs[i - 1]) / 2 for i in range(1, len(ts)))


def measure(nvml, h, seconds, interval_s):
    stop = threading.Event()
    worker = threading.Thread(target=load, args=(stop, seconds + 5), daemon=True)
    worker.start()
    time.sleep(3)  # warm-up: clocks and power settle before the window opens
    t0, e0 = time.time(), nvml.energy_mj(h)
    ts, ps, state = [], [], {"powerLimitW": [], "smClockMHz": [], "appClockMHz": [], "tempC": [], "clockEvents": []}
    while time.time() - t0 < seconds:
        p = nvml.power_mw(h)
        if p is not None:
            ts.append(time.time())
            ps.append(p / 1000)
        for key, read, scale in (("powerLimitW", nvml.enforced_limit_mw, 1000), ("smClockMHz", nvml.sm_clock, 1), ("appClockMHz", nvml.app_clock, 1), ("tempC", nvml.temp, 1), ("clockEvents", nvml.clock_events, 1)):
            v = read(h)
            if v is not None:
                state[key].append(v / scale)
        time.sleep(interval_s)
    t1, e1 = time.time(), nvml.energy_mj(h)
    stop.set()
    worker.join()
    integrated = trapezoid(ts, ps)
    counter = None if e0 is None or e1 is None else (e1 - e0) / 1000
    # Integrated power covers [ts[0], ts[-1]]; scale the counter's [t0, t1] to the same span.
    counter_same_span = None if counter is None or len(ts) < 2 else counter * (ts[-1] - ts[0]) / (t1 - t0)
    summary = {k: ({"min": min(v), "max": max(v), "last": v[-1]} if v else None) for k, v in state.items()}
    if state["clockEvents"]:
        summary["clockEvents"]["any"] = hex(int(sum(set(int(x) for x in state["clockEvents"]))))
    return {
        "windowS": t1 - t0,
        "samples": len(ps),
        "meanPowerW": integrated / (ts[-1] - ts[0]) if len(ts) > 1 else None,
        "integratedJ": integrated,
        "counterJ": counter_same_span,
        "differencePct": None if not counter_same_span else 100 * (integrated - counter_same_span) / counter_same_span,
        "state": summary,
    }


def helper_round_trip(nvml, h, watts):
    """The node helper's `hold` sets `watts` on every GPU; the enforced limit is read while it holds and after it restores."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "deploy", "node-helper", "erg-power-helper")
    if os.geteuid() != 0:
        return {"skipped": "not root: setting a power limit needs root (the helper would ask sudo)"}
    smi = shutil.which("nvidia-smi")
    lab = tempfile.mkdtemp(prefix="erg-gpu-check-")
    os.chmod(lab, 0o755)
    helper = os.path.join(lab, "erg-power-helper")
    shutil.copy(src, helper)
    os.chmod(helper, 0o755)
    state_dir = os.path.join(lab, "state")
    os.mkdir(state_dir, 0o700)
    with open(os.path.join(lab, "power-helper.conf"), "w") as f:
        f.write(f"NVIDIA_SMI={smi}\nSTATE_DIR={state_dir}\nALLOW=gpuPowerLimitW\n")
    os.chmod(os.path.join(lab, "power-helper.conf"), 0o644)
    before = nvml.enforced_limit_mw(h)
    proc = subprocess.Popen([helper, "hold", "--job", "gpucheck", "--gpu-power-limit-w", str(watts)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    record = proc.stdout.readline().strip()
    held = nvml.enforced_limit_mw(h)
    if proc.poll() is None:
        proc.send_signal(signal.SIGUSR2)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    after = nvml.enforced_limit_mw(h)
    shutil.rmtree(lab, ignore_errors=True)
    try:
        parsed = json.loads(record)
    except ValueError:
        parsed = {"unreadable": record, "stderr": proc.stderr.read()[-2000:]}
    return {
        "requestedW": watts,
        "enforcedBeforeW": None if before is None else before / 1000,
        "enforcedWhileHeldW": None if held is None else held / 1000,
        "enforcedAfterW": None if after is None else after / 1000,
        "helperExit": proc.returncode,
        "record": parsed,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--interval-ms", type=float, default=100)
    ap.add_argument("--set-power-limit", type=int, default=None, help="W: set through the node helper, then restore")
    ap.add_argument("--out", default="gpu-check.json")
    args = ap.parse_args()

    nvml = Nvml()
    h = nvml.handle(0)
    out = {"gpu": nvml.name(h), "driver": nvml.driver(), "measure": measure(nvml, h, args.seconds, args.interval_ms / 1000)}
    if args.set_power_limit is not None:
        out["helper"] = helper_round_trip(nvml, h, args.set_power_limit)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    m = out["measure"]
    print(f"{out['gpu']} (driver {out['driver']}): {m['windowS']:.1f} s under load, {m['samples']} power samples, mean {m['meanPowerW']:.1f} W")
    diff = m["differencePct"]
    print(f"integrated power {m['integratedJ']:.1f} J vs NVML energy counter {m['counterJ']:.1f} J: {'n/a' if diff is None else f'{diff:+.2f} %'}")
    print(f"state in force: {json.dumps(m['state'])}")
    if "helper" in out:
        print(f"node helper: {json.dumps(out['helper'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
