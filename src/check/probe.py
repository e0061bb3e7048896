# gpufleet-check-probe: the compute half of `gpufleet check`.
#
# Sent on the standard input of `python3 -` (nothing is written to the host's disk) and run with
# the host's own PyTorch. Prints one JSON object per line on stdout; the Rust side
# (src/check/probe.rs) parses them. Every object has "t", its type:
#
#   hello     protocol version, python version, pid
#   skip      PyTorch (or CUDA through it) is unusable; "reason" says why in English, "kind"
#             (no_torch: "executable", "error"; no_gpu: "version", "cuda", "error" or null) lets
#             gpufleet say it in the reader's language; nothing else follows
#   torch     torch version, the CUDA it was built for, compiled architectures
#   device    one per visible CUDA device: name, uuid, capability, memory, bf16, arch_ok
#   sampler   the nvidia-smi fields being sampled, or "error" when sampling is impossible
#   sample    one nvidia-smi CSV line, with the phase it was taken in and seconds since start
#   phase     a phase began ("matmul", "copy", "vram" per device, then "sustain")
#   matmul    dense matrix multiply throughput of one device (all-ones and random inputs)
#   copy      device-to-device copy bandwidth of one device (bytes read plus bytes written)
#   vram      how much of the free memory could be allocated, written and read back
#   window    one window of the sustained load on one device
#   error     a stage failed; "stage", "gpu" and "message" say where
#   done      the end
#
# It only reads the GPUs' state and loads them: it never changes a power limit, clock, ECC or
# persistence setting. Memory it allocates is released before it exits.

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time

PROTOCOL = 1
GIB = 1 << 30

_emit_lock = threading.Lock()
_started = time.monotonic()


def _finite(value):
    # JSON has no NaN or infinity; an impossible reading becomes null rather than bad JSON.
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def emit(obj):
    line = json.dumps(_finite(obj), separators=(",", ":"), default=str)
    with _emit_lock:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            # The reader is gone (the check was stopped): exit at once. The process's GPU
            # memory is released by the driver when it ends.
            os._exit(1)


def elapsed():
    return round(time.monotonic() - _started, 3)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gpufleet-check-probe")
    p.add_argument("--sustain-s", type=float, default=60.0)
    p.add_argument("--bench-s", type=float, default=2.0)
    p.add_argument("--matmul-n", type=int, default=8192)
    p.add_argument("--vram-fraction", type=float, default=0.95)
    p.add_argument("--window-s", type=float, default=2.0)
    p.add_argument("--sample-ms", type=int, default=500)
    p.add_argument("--sample-fields", default="")
    p.add_argument("--nvidia-smi", default="nvidia-smi")
    return p.parse_args(argv)


class Sampler:
    """Runs `nvidia-smi --query-gpu=... -lms N` for the whole probe and forwards each line.

    Sampling happens while the load runs, which is the only time PCIe links, clocks and
    clock-event reasons say anything: links train down and clocks drop when idle.
    """

    def __init__(self, program, fields, interval_ms):
        self.program = program
        self.fields = [f for f in fields.split(",") if f]
        self.interval_ms = max(100, interval_ms)
        self.phase = "start"
        self.proc = None
        self.thread = None

    def _query(self, fields, stream):
        argv = [self.program, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
        if stream:
            argv += ["-lms", str(self.interval_ms)]
        return argv

    def start(self):
        if not self.fields:
            emit({"t": "sampler", "error": "no fields to sample"})
            return
        fields = list(self.fields)
        # A driver rejects fields it does not know, naming one per run: drivers before 535
        # call the clock-event reasons clocks_throttle_reasons.*, older ones lack some PCIe
        # fields. One plain query finds out (with a timeout, as a wedged GPU can hang
        # nvidia-smi) before the stream starts.
        first = ""
        for _ in range(len(fields) + 1):
            try:
                done = subprocess.run(
                    self._query(fields, False),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    universal_newlines=True,
                    timeout=20,
                )
            except (OSError, subprocess.SubprocessError) as e:
                emit({"t": "sampler", "error": "cannot run %s: %s" % (self.program, e)})
                return
            rejected = _rejected_field(done.stdout)
            if rejected is None:
                first = done.stdout
                break
            if rejected.startswith("clocks_event_reasons."):
                renamed = "clocks_throttle_reasons." + rejected.split(".", 1)[1]
                fields = [renamed if f == rejected else f for f in fields]
            else:
                fields = [f for f in fields if f != rejected]
        if done.returncode != 0 or not first.strip():
            text = " ".join(done.stdout.split())[:300]
            emit({"t": "sampler", "error": "nvidia-smi exit %s: %s" % (done.returncode, text)})
            return
        try:
            self.proc = subprocess.Popen(
                self._query(fields, True),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                universal_newlines=True,
                bufsize=1,
            )
        except OSError as e:
            emit({"t": "sampler", "error": "cannot run %s: %s" % (self.program, e)})
            return
        emit({"t": "sampler", "fields": fields, "interval_ms": self.interval_ms})
        for line in first.splitlines():
            self._forward(line)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _forward(self, line):
        line = line.rstrip("\r\n")
        if line:
            emit({"t": "sample", "phase": self.phase, "elapsed_s": elapsed(), "csv": line})

    def _run(self):
        for line in self.proc.stdout:
            self._forward(line)

    def stop(self):
        if self.proc is None:
            return
        try:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
        if self.thread is not None:
            self.thread.join(timeout=2)


def _rejected_field(output):
    marker = "is not a valid field to query"
    line = next((l for l in output.splitlines() if marker in l), None)
    if line is None:
        return None
    text = line.split(marker)[0].strip()
    if text.startswith("Field"):
        text = text[len("Field"):].strip()
    return text.strip('"').strip() or None


def timed(torch, device, fn, target_s, min_iters=3):
    """Seconds per call of fn on device, timed with CUDA events over about target_s seconds."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Calibrate with a short run, then time enough calls to fill target_s.
    start.record()
    for _ in range(min_iters):
        fn()
    end.record()
    end.synchronize()
    per_call_s = max(start.elapsed_time(end) / 1000.0 / min_iters, 1e-6)
    iters = max(min_iters, int(target_s / per_call_s))
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0 / iters, iters


def warm_up(torch, fn, seconds):
    # Clocks ramp and cuBLAS picks its kernel on the first calls; none of that is measured.
    deadline = time.monotonic() + seconds
    calls = 0
    while calls < 3 or time.monotonic() < deadline:
        fn()
        calls += 1
        if calls % 8 == 0:
            torch.cuda.synchronize()


def bench_matmul(torch, dev, dtype, n, bench_s):
    """TFLOP/s of an n x n x n matmul, twice: with all-ones inputs and with random ones.

    The tensor cores do the same work either way, but random bits draw far more power: on an
    H200 random inputs hold the card at its 700 W limit (~665 TFLOP/s at ~1.46 GHz) while ones
    run at ~1.73 GHz under the limit (~780 TFLOP/s). The ones figure measures what the silicon
    can do (SM count, clocks) and is what published and reference figures compare with; the
    random figure is what real data gets under the power limit. Every element of the ones
    product equals n, which checks the arithmetic.
    """
    results = {}
    correct = finite = None
    with torch.cuda.device(dev):
        c = torch.empty(n, n, device=dev, dtype=dtype)
        for kind in ("ones", "random"):
            if kind == "ones":
                a = torch.ones(n, n, device=dev, dtype=dtype)
                b = torch.ones(n, n, device=dev, dtype=dtype)
            else:
                a = torch.randn(n, n, device=dev, dtype=dtype)
                b = torch.randn(n, n, device=dev, dtype=dtype)

            def mm():
                torch.matmul(a, b, out=c)

            warm_up(torch, mm, min(1.0, bench_s / 2))
            per_call_s, iters = timed(torch, dev, mm, bench_s)
            if kind == "ones":
                # Within 1%, not exact: split-K reductions may round partial sums.
                correct = bool(((c.float() - n).abs() <= n * 0.01).all().item())
            else:
                finite = bool(torch.isfinite(c).all().item())
            results[kind] = (2.0 * n ** 3 / per_call_s / 1e12, per_call_s, iters)
            del a, b
        del c
        torch.cuda.empty_cache()
    return results, correct, finite


def bench_copy(torch, dev, bench_s):
    with torch.cuda.device(dev):
        free, _ = torch.cuda.mem_get_info(dev)
        # Large enough that caches do not flatter the result (H200 L2 is 50 MB).
        nbytes = int(min(GIB, free // 8)) // 4096 * 4096
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        src.fill_(0x5A)
        dst = torch.empty_like(src)

        def cp():
            dst.copy_(src)

        warm_up(torch, cp, min(0.5, bench_s / 4))
        per_call_s, iters = timed(torch, dev, cp, bench_s)
        same = bool(torch.equal(src[: 1 << 20], dst[: 1 << 20]))
        del src, dst
        torch.cuda.empty_cache()
    # A copy reads every byte once and writes it once.
    return 2.0 * nbytes / per_call_s / 1e9, nbytes, iters, same


def _pattern(i, j):
    return (i * 1000003 + j * 7919 + 0x5A5A5A5) & 0x7FFFFFFF


def probe_vram(torch, dev, fraction):
    """Allocates about `fraction` of the free memory in chunks, writes a pattern that differs
    per slice, reads it back, and repeats with the complement; frees everything afterwards."""
    chunks = []
    result = {"t": "vram", "gpu": dev}
    with torch.cuda.device(dev):
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info(dev)
        target = int(free * fraction)
        result.update(free_bytes=free, total_bytes=total, target_bytes=target)
        allocated = 0
        chunk_bytes = GIB
        oom = None
        try:
            while allocated + 4096 <= target:
                size = min(chunk_bytes, target - allocated) // 4 * 4
                if size == 0:
                    break
                chunks.append(torch.empty(size // 4, dtype=torch.int32, device=dev))
                allocated += size
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
            oom = str(e).splitlines()[0][:300]
        result["allocated_bytes"] = allocated
        result["oom"] = oom
        slice_elems = (64 << 20) // 4
        mismatched = 0
        checked = 0
        try:
            for flip in (0, 0x7FFFFFFF):
                for i, chunk in enumerate(chunks):
                    for j, part in enumerate(chunk.split(slice_elems)):
                        part.fill_(_pattern(i, j) ^ flip)
                torch.cuda.synchronize(dev)
                for i, chunk in enumerate(chunks):
                    for j, part in enumerate(chunk.split(slice_elems)):
                        # Small temporaries only: the slice compare fits in the 5% left free.
                        mismatched += int((part != (_pattern(i, j) ^ flip)).sum().item())
                        checked += part.numel()
        except RuntimeError as e:
            result["verify_error"] = str(e).splitlines()[0][:300]
        result["checked_elements"] = checked
        result["mismatched_elements"] = mismatched
        # Loop variables would keep the last chunk alive past the cache release.
        chunk = part = None
        del chunks, chunk, part
        torch.cuda.synchronize(dev)
        torch.cuda.empty_cache()
    return result


def sustain(torch, devs, dtype, n, seconds, window_s, per_call_s):
    """Runs matmuls of random data on every device at once for `seconds`, one thread per
    device, reporting each window's throughput: random bits draw full power, so the whole
    chassis heats up as it would in training."""
    stop_at = time.monotonic() + seconds

    def run(dev):
        try:
            with torch.cuda.device(dev):
                a = torch.randn(n, n, device=dev, dtype=dtype)
                b = torch.randn(n, n, device=dev, dtype=dtype)
                c = torch.empty(n, n, device=dev, dtype=dtype)
                calls = max(1, int(window_s / max(per_call_s.get(dev, 0.01), 1e-6)))
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                while time.monotonic() < stop_at:
                    start.record()
                    for _ in range(calls):
                        torch.matmul(a, b, out=c)
                    end.record()
                    end.synchronize()
                    secs = start.elapsed_time(end) / 1000.0
                    emit({
                        "t": "window",
                        "gpu": dev,
                        "elapsed_s": elapsed(),
                        "seconds": round(secs, 4),
                        "tflops": round(2.0 * n ** 3 * calls / secs / 1e12, 2),
                    })
                del a, b, c
                torch.cuda.empty_cache()
        except Exception as e:
            emit({"t": "error", "stage": "sustain", "gpu": dev, "message": _short(e)})

    threads = [threading.Thread(target=run, args=(d,), daemon=True) for d in devs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _short(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0][:300] if text else "")


def _arch_ok(arch_list, major, minor):
    if not arch_list:
        return None
    if "sm_%d%d" % (major, minor) in arch_list:
        return True
    # Same-major SASS runs on later minors; PTX of an older arch is JIT-compiled forward.
    for arch in arch_list:
        kind, _, num = arch.partition("_")
        num = num.rstrip("abcdefghijklmnopqrstuvwxyz")  # sm_90a, sm_100f
        if len(num) < 2 or not num.isdigit():
            continue
        a_major, a_minor = int(num[:-1]), int(num[-1])
        if kind == "sm" and a_major == major and a_minor <= minor:
            return True
        if kind == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False


def describe_devices(torch, arch_list):
    devices = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        uuid = getattr(p, "uuid", None)
        bf16 = p.major >= 8
        info = {
            "t": "device",
            "index": i,
            "name": p.name,
            "uuid": str(uuid) if uuid is not None else None,
            "capability": [p.major, p.minor],
            "total_bytes": int(p.total_memory),
            "sm_count": int(p.multi_processor_count),
            "bf16": bf16,
            "arch_ok": _arch_ok(arch_list, p.major, p.minor),
        }
        emit(info)
        devices.append(info)
    return devices


def main(argv):
    args = parse_args(argv)
    emit({
        "t": "hello",
        "protocol": PROTOCOL,
        "python": platform.python_version(),
        "executable": sys.executable,
        "pid": os.getpid(),
    })
    # nvidia-smi numbers GPUs in PCI order; make CUDA agree so results line up with samples.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    try:
        import torch
    except Exception as e:  # a broken install raises more than ImportError
        emit({
            "t": "skip",
            "kind": "no_torch",
            "executable": sys.executable,
            "error": _short(e),
            "reason": "PyTorch is not importable by %s (%s)" % (sys.executable, _short(e)),
        })
        emit({"t": "done", "elapsed_s": elapsed()})
        return 0
    arch_list = []
    try:
        arch_list = list(torch.cuda.get_arch_list())
    except Exception:
        pass
    emit({
        "t": "torch",
        "version": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "arch_list": arch_list,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    })
    try:
        usable = torch.cuda.is_available() and torch.cuda.device_count() > 0
    except Exception as e:
        usable = False
        error = _short(e)
    else:
        error = None
    if not usable:
        built = str(getattr(torch.version, "cuda", None))
        why = error or "torch.cuda.is_available() is False"
        emit({
            "t": "skip",
            "kind": "no_gpu",
            "version": torch.__version__,
            "cuda": built,
            "error": error,
            "reason": "PyTorch %s (built for CUDA %s) cannot use a GPU: %s" % (torch.__version__, built, why),
        })
        emit({"t": "done", "elapsed_s": elapsed()})
        return 0

    devices = describe_devices(torch, arch_list)
    sampler = Sampler(args.nvidia_smi, args.sample_fields, args.sample_ms)
    sampler.start()
    per_call_s = {}
    try:
        for d in devices:
            dev = d["index"]
            dtype = torch.bfloat16 if d["bf16"] else torch.float16
            dtype_name = "bf16" if d["bf16"] else "fp16"
            for stage in ("matmul", "copy", "vram"):
                sampler.phase = "%s:%d" % (stage, dev)
                emit({"t": "phase", "phase": stage, "gpu": dev, "elapsed_s": elapsed()})
                try:
                    if stage == "matmul":
                        res, correct, finite = bench_matmul(torch, dev, dtype, args.matmul_n, args.bench_s)
                        # The sustained load runs random inputs, so it is sized by their speed.
                        per_call_s[dev] = res["random"][1]
                        emit({
                            "t": "matmul", "gpu": dev, "dtype": dtype_name, "n": args.matmul_n,
                            "iterations": res["ones"][2], "tflops": round(res["ones"][0], 2),
                            "tflops_random": round(res["random"][0], 2),
                            "correct": correct, "finite": finite,
                        })
                    elif stage == "copy":
                        gbps, nbytes, iters, same = bench_copy(torch, dev, args.bench_s)
                        emit({
                            "t": "copy", "gpu": dev, "bytes": nbytes, "iterations": iters,
                            "gb_per_s": round(gbps, 1), "verified": same,
                        })
                    else:
                        emit(probe_vram(torch, dev, args.vram_fraction))
                except Exception as e:
                    emit({"t": "error", "stage": stage, "gpu": dev, "message": _short(e)})
                    torch.cuda.empty_cache()
        sampler.phase = "sustain"
        ready = [d["index"] for d in devices if d["index"] in per_call_s]
        emit({"t": "phase", "phase": "sustain", "gpu": None, "elapsed_s": elapsed(), "seconds": args.sustain_s})
        if ready and args.sustain_s > 0:
            dtype_of = {d["index"]: d["bf16"] for d in devices}
            # One dtype for all: mixed hosts are rare, and fp16 runs everywhere bf16 does.
            dtype = torch.bfloat16 if all(dtype_of[i] for i in ready) else torch.float16
            sustain(torch, ready, dtype, args.matmul_n, args.sustain_s, args.window_s, per_call_s)
        sampler.phase = "end"
    finally:
        sampler.stop()
        torch.cuda.empty_cache()
    emit({"t": "done", "elapsed_s": elapsed()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
