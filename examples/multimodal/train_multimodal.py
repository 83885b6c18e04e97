#!/usr/bin/env python3
"""train_multimodal.py — erg's reference training workload: a small multimodal model with the study's knobs.

The study erg exists for sweeps where training state lives (CPU offloading), whether activations are
recomputed (activation checkpointing) and how the sequence is split over ranks (Ulysses sequence
parallelism), and asks which configuration is fastest, which is most frugal, and which data movement
explains the difference. This script is that workload at any size: an image encoder (patches → tokens)
and a text encoder (tokens → embeddings) joined by a causal transformer that predicts the next text
token, trained on synthetic samples generated from a seed (nothing is downloaded).

Two implementations of the same knobs:
  * plain PyTorch (always available; what erg's tests run on CPU): offloading, checkpointing
    (torch.utils.checkpoint) and Ulysses all-to-all (torch.distributed: gloo on CPU, NCCL on GPU)
    written out here, so every byte moved is counted by this script;
  * DeepSpeed, when it can be imported (or --engine deepspeed): ZeRO-3 with offload_optimizer /
    offload_param, deepspeed.checkpointing and deepspeed.sequence.layer.DistributedAttention, from the
    same options or from a --deepspeed config file. DeepSpeed is in neither registry erg's machines
    reach, so that path is written against DeepSpeed's documented API and NOT run by erg's tests;
    docs/study.md says how to check it on a site that has DeepSpeed.

Knobs (docs/study.md maps each to DeepSpeed's config):
  --offload none|optimizer|optimizer_params   where optimizer state (and parameters) live between steps
  --checkpointing / --no-checkpointing        recompute each transformer block's activations in backward
  --ulysses-degree N (--sp N)                 sequence-parallel degree: ranks that split one sequence
  --precision fp32|bf16|fp16, --micro-batch, --grad-accum, --seq-length, --train-steps, --seed

Offloading in the plain implementation, per step (the cost is real copies, counted):
  optimizer          the optimizer state (Adam moments, plus fp32 master weights under bf16) lives in
                     host memory; it is copied to the device before the optimizer step and back after
                     it, and the device copies are freed: 2 × the state's bytes move per step.
  optimizer_params   the parameters too: fetched to the device before the forward pass, written back
                     after the optimizer step and freed: 2 × (state + parameter bytes) per step.
On a GPU "device" is the GPU and host buffers are pinned; on CPU both sides are host memory, in
separate buffers, so the copies and allocations still happen.

Distributed: ranks come from RANK/WORLD_SIZE/LOCAL_RANK (torchrun), else Slurm's SLURM_PROCID /
SLURM_NTASKS / SLURM_LOCALID (so `srun python train_multimodal.py …` starts the ranks across nodes),
else --rank/--world-size; the rendezvous is MASTER_ADDR/MASTER_PORT, else SLURM_LAUNCH_NODE_IPADDR
(the node srun was started from) and port 29500, else --master-addr/--master-port. The world is
dp × sp ranks: consecutive groups of sp ranks share a sequence.

Output (rank 0, stdout), read by erg's metric regexes:
  config engine=… offload=… … param_bytes=… optimizer_state_bytes=… bytes=counted|estimated   once
  epoch=0/micro_step=N/global_step=N, RunningAvgSamplesPerSec=…, CurrSamplesPerSec=…, MemAllocated=…GB,
      MaxMemAllocated=…GB, loss=…                                               DeepSpeed's ThroughputTimer
                                                                                 format, every --steps-per-print
  bytes_moved step=N h2d_bytes=… d2h_bytes=… alltoall_bytes=… allreduce_bytes=…  this rank, this step
  bytes_moved_total steps=S ranks=R h2d_bytes=… d2h_bytes=… alltoall_bytes=… allreduce_bytes=…
                                                                                 every rank, every step
Bytes: h2d/d2h are the bytes copied between host and device buffers; alltoall the bytes a rank sends
to OTHER ranks (its own slice stays); allreduce the payload (buffer bytes) a rank reduces. Under
DeepSpeed (bytes=estimated) the host<->device figures follow ZeRO-Offload's scheme, not a measurement.

Phase marks (`import erg`, where erg runs the job; a no-op elsewhere): forward, backward,
optimizer_step, offload_transfer, all_to_all, grad_allreduce, one `step` per optimizer step. Only the
first rank of each node writes them (--mark-ranks all: every rank): several ranks appending
interleaved begin/end lines to one node's file would nest phases that are not nested.

Keep this file free of the two-brace placeholder sequence erg's `files:` templates use, so a campaign
can stage it inline; it imports only torch (and deepspeed, erg where present).
"""

import argparse
import json
import math
import os
import resource
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

try:  # erg's marker: on PYTHONPATH inside an erg job, absent elsewhere
    import erg as _erg
except ImportError:  # pragma: no cover - outside erg
    _erg = None

OFFLOAD_MODES = ("none", "optimizer", "optimizer_params")
PRECISIONS = ("fp32", "bf16", "fp16")
DEFAULT_MASTER_PORT = 29500


# --- Options -------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description="erg's reference multimodal training workload (see the module docstring)")
    p.add_argument("--engine", choices=("auto", "torch", "deepspeed"), default="auto",
                   help="auto: DeepSpeed where it can be imported, else plain PyTorch")
    p.add_argument("--deepspeed", metavar="CONFIG.json", default=None,
                   help="a DeepSpeed config: its offload devices, bf16/fp16, micro-batch, steps_per_print and "
                        "activation_checkpointing set the knobs (an option given as well must agree)")
    p.add_argument("--offload", choices=OFFLOAD_MODES, default=None)
    ck = p.add_mutually_exclusive_group()
    ck.add_argument("--checkpointing", dest="checkpointing", action="store_true", default=None)
    ck.add_argument("--no-checkpointing", dest="checkpointing", action="store_false")
    p.add_argument("--ulysses-degree", "--sp", dest="sp", type=int, default=1)
    p.add_argument("--precision", choices=PRECISIONS, default=None)
    p.add_argument("--micro-batch", type=int, default=None)
    p.add_argument("--grad-accum", type=int, default=None, help="micro-batches per optimizer step (DeepSpeed's "
                   "gradient_accumulation_steps); --train-steps counts optimizer steps")
    p.add_argument("--seq-length", type=int, default=256, help="tokens per sample: image patches + text")
    p.add_argument("--train-steps", "--steps", dest="steps", type=int, default=10)
    p.add_argument("--steps-per-print", type=int, default=None)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-3)
    # Model size: small defaults; a study scales these.
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--patch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads per rank (0: torch's default)")
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--world-size", type=int, default=None)
    p.add_argument("--master-addr", default=None)
    p.add_argument("--master-port", type=int, default=None)
    p.add_argument("--mark-ranks", choices=("node-first", "all"), default="node-first")
    p.add_argument("--run-name", default=None, help="printed with the config line (erg passes its run id)")
    return p.parse_args(argv)


def settle_knobs(args):
    """The knobs, from the options and --deepspeed's config; a conflict between them is an error."""
    config = None
    if args.deepspeed:
        with open(args.deepspeed) as f:
            config = json.load(f)
        zero = config.get("zero_optimization", {})
        opt_dev = (zero.get("offload_optimizer") or {}).get("device", "none")
        par_dev = (zero.get("offload_param") or {}).get("device", "none")
        from_config = {
            # "none" and "cpu" only: NVMe offload is not a mode of this study.
            "offload": "optimizer_params" if par_dev == "cpu" else ("optimizer" if opt_dev == "cpu" else "none"),
            "precision": "bf16" if (config.get("bf16") or {}).get("enabled") else
                         ("fp16" if (config.get("fp16") or {}).get("enabled") else "fp32"),
            # The example's switch: partition_activations (or any activation_checkpointing section
            # asking for something) means "checkpoint every block".
            "checkpointing": bool(any((config.get("activation_checkpointing") or {}).values())),
            "micro_batch": config.get("train_micro_batch_size_per_gpu"),
            "grad_accum": config.get("gradient_accumulation_steps"),
            "steps_per_print": config.get("steps_per_print"),
        }
        if par_dev == "cpu" and opt_dev != "cpu":
            fail("--deepspeed: offload_param without offload_optimizer is not a mode of this study")
        for key, value in from_config.items():
            given = getattr(args, key)
            if value is None:
                continue
            if given is not None and given != value:
                fail("--%s %s disagrees with %s (%s)" % (key.replace("_", "-"), given, args.deepspeed, value))
            setattr(args, key, value)
    args.offload = args.offload or "none"
    args.precision = args.precision or "fp32"
    args.checkpointing = bool(args.checkpointing)
    args.micro_batch = args.micro_batch or 1
    args.grad_accum = args.grad_accum or 1
    args.steps_per_print = args.steps_per_print or 1
    return config


def fail(message):
    sys.stderr.write("train_multimodal.py: %s\n" % message)
    sys.exit(2)


# --- Distributed set-up --------------------------------------------------------------------------


def world_from_env(args):
    """(rank, world size, local rank, master address, master port) from torchrun, Slurm or the options."""
    env = os.environ

    def first(*names):
        for n in names:
            if env.get(n):
                return env[n]
        return None

    rank = args.rank if args.rank is not None else int(first("RANK", "SLURM_PROCID") or 0)
    world = args.world_size if args.world_size is not None else int(first("WORLD_SIZE", "SLURM_NTASKS") or 1)
    local = int(first("LOCAL_RANK", "SLURM_LOCALID") or (rank if args.rank is not None else 0))
    addr = args.master_addr or first("MASTER_ADDR", "SLURM_LAUNCH_NODE_IPADDR") or "127.0.0.1"
    port = args.master_port or int(first("MASTER_PORT") or DEFAULT_MASTER_PORT)
    return rank, world, local, addr, port


class World(object):
    """This rank's place: rank, world size, sp degree, its sequence group and its slot in it."""

    def __init__(self, rank, world, local, sp):
        if sp < 1 or world % sp != 0:
            fail("--ulysses-degree %d must divide the world size %d" % (sp, world))
        self.rank, self.size, self.local, self.sp = rank, world, local, sp
        self.dp = world // sp
        self.sp_rank = rank % sp
        self.dp_rank = rank // sp
        self.sp_group = None

    def make_groups(self):
        if self.size == 1 or self.sp == 1:
            return
        # Every rank creates every group (torch.distributed's rule), keeps its own.
        for g in range(self.dp):
            ranks = list(range(g * self.sp, (g + 1) * self.sp))
            group = dist.new_group(ranks)
            if self.rank in ranks:
                self.sp_group = group


# --- Counting what moves -------------------------------------------------------------------------


class Moved(object):
    """Bytes moved by this rank in the current step, and over the run."""

    KINDS = ("h2d_bytes", "d2h_bytes", "alltoall_bytes", "allreduce_bytes")

    def __init__(self):
        self.step = dict.fromkeys(self.KINDS, 0)
        self.total = dict.fromkeys(self.KINDS, 0)

    def add(self, kind, n):
        self.step[kind] += int(n)
        self.total[kind] += int(n)

    def end_step(self):
        done, self.step = self.step, dict.fromkeys(self.KINDS, 0)
        return done


MOVED = Moved()


class Marks(object):
    """erg's phases and steps, or nothing (outside erg, or a rank that does not mark)."""

    def __init__(self, on):
        self.on = bool(on and _erg is not None)

    def phase(self, name):
        return _erg.phase(name) if self.on else _NoPhase

    def begin(self, name):
        if self.on:
            _erg.begin(name)

    def end(self, name):
        if self.on:
            _erg.end(name)

    def step(self):
        if self.on:
            _erg.step()


class _NoPhaseType(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NoPhase = _NoPhaseType()
MARKS = Marks(False)


def nbytes(t):
    return t.numel() * t.element_size()


# --- Ulysses all-to-all (plain PyTorch) -----------------------------------------------------------


def _all_to_all(x, group, sp, scatter_dim, gather_dim):
    """Splits x into sp chunks along scatter_dim, exchanges them, joins what arrives along gather_dim."""
    chunks = [c.contiguous() for c in x.chunk(sp, dim=scatter_dim)]
    send = torch.stack(chunks)  # [sp, …]: chunk i goes to group rank i
    recv = torch.empty_like(send)
    # gloo exchanges no bfloat16: the same bytes go as uint8 (an all-to-all copies, never computes).
    wire = (lambda t: t.view(torch.uint8)) if send.dtype == torch.bfloat16 else (lambda t: t)
    with MARKS.phase("all_to_all"):
        dist.all_to_all_single(wire(recv), wire(send), group=group)
    MOVED.add("alltoall_bytes", nbytes(send) * (sp - 1) // sp)
    return torch.cat(list(recv.unbind(0)), dim=gather_dim)


class SeqToHeads(torch.autograd.Function):
    """[s/p, b, h, d] → [s, b, h/p, d] forward; the inverse exchange for the gradient."""

    @staticmethod
    def forward(ctx, x, group, sp):
        ctx.group, ctx.sp = group, sp
        return _all_to_all(x, group, sp, scatter_dim=2, gather_dim=0)

    @staticmethod
    def backward(ctx, grad):
        return _all_to_all(grad, ctx.group, ctx.sp, scatter_dim=0, gather_dim=2), None, None


class HeadsToSeq(torch.autograd.Function):
    """[s, b, h/p, d] → [s/p, b, h, d] forward; the inverse exchange for the gradient."""

    @staticmethod
    def forward(ctx, x, group, sp):
        ctx.group, ctx.sp = group, sp
        return _all_to_all(x, group, sp, scatter_dim=0, gather_dim=2)

    @staticmethod
    def backward(ctx, grad):
        return _all_to_all(grad, ctx.group, ctx.sp, scatter_dim=2, gather_dim=0), None, None


def local_attention(q, k, v):
    """Causal attention over the whole sequence: q, k, v [s, b, h, d] → [s, b, h, d]."""
    q, k, v = (t.permute(1, 2, 0, 3) for t in (q, k, v))  # [b, h, s, d]
    s = q.shape[2]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    out = torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)
    return out.permute(2, 0, 1, 3)


class PlainUlysses(object):
    """Ulysses over torch.distributed: gather the sequence, scatter the heads, attend, and back."""

    def __init__(self, group, sp):
        self.group, self.sp = group, sp

    def __call__(self, q, k, v):
        if self.sp == 1:
            return local_attention(q, k, v)
        q, k, v = (SeqToHeads.apply(t, self.group, self.sp) for t in (q, k, v))
        return HeadsToSeq.apply(local_attention(q, k, v), self.group, self.sp)


class DeepSpeedUlysses(object):
    """deepspeed.sequence.layer.DistributedAttention around the same local attention (seq-first layout:
    scatter_idx=2 the heads, gather_idx=0 the sequence, batch in dim 1). Not run by erg's tests.

    Counted, not measured: DeepSpeed exchanges q, k, v and the output, (sp-1)/sp of each to other
    ranks, in forward and their gradients in backward, the sizes the plain path exchanges. Marked:
    the forward exchanges (the local attention between them is outside the all_to_all phase); the
    backward ones run inside DeepSpeed's autograd function, unmarked, within `backward`."""

    def __init__(self, group, sp):
        import inspect
        from deepspeed.sequence.layer import DistributedAttention

        self.sp = sp
        self.attn = DistributedAttention(self._local, group, scatter_idx=2, gather_idx=0) if sp > 1 else None
        # DeepSpeed >= 0.15 takes batch_dim_idx as forward's 4th argument; older releases do not.
        self.batch_arg = self.attn is not None and "batch_dim_idx" in inspect.signature(self.attn.forward).parameters

    @staticmethod
    def _local(q, k, v, *args, **kwargs):
        MARKS.end("all_to_all")
        try:
            return local_attention(q, k, v)
        finally:
            MARKS.begin("all_to_all")

    def __call__(self, q, k, v):
        if self.sp == 1:
            return local_attention(q, k, v)
        moved = 4 * nbytes(q) * (self.sp - 1) // self.sp
        MOVED.add("alltoall_bytes", moved)
        MARKS.begin("all_to_all")
        try:
            out = self.attn(q, k, v, 1) if self.batch_arg else self.attn(q, k, v)
        finally:
            MARKS.end("all_to_all")
        # The gradients' exchange, counted when backward reaches it (once, with checkpointing too).
        return _CountInBackward.apply(out, moved) if torch.is_grad_enabled() else out


class _CountInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.n = n
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        MOVED.add("alltoall_bytes", ctx.n)
        return grad, None


# --- The model ------------------------------------------------------------------------------------


class Block(nn.Module):
    """A pre-norm transformer block over this rank's part of the sequence [s/p, b, hidden]."""

    def __init__(self, hidden, heads):
        super(Block, self).__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
        self.attention = None  # PlainUlysses or DeepSpeedUlysses, set once the groups exist

    def forward(self, x):
        s, b, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(s, b, 3, self.heads, h // self.heads).unbind(2)
        x = x + self.proj(self.attention(q, k, v).reshape(s, b, h))
        return x + self.mlp(self.norm2(x))


class MultimodalModel(nn.Module):
    """Image patches and text tokens, embedded by their own encoders, joined by causal transformer
    blocks; the head predicts each text token's successor."""

    def __init__(self, a):
        super(MultimodalModel, self).__init__()
        self.patches = (a.image_size // a.patch) ** 2
        self.image_encoder = nn.Sequential(
            nn.Conv2d(3, a.hidden, kernel_size=a.patch, stride=a.patch), nn.GELU(),
            nn.Conv2d(a.hidden, a.hidden, kernel_size=1))
        self.text_encoder = nn.Sequential(nn.Embedding(a.vocab, a.hidden), nn.Linear(a.hidden, a.hidden))
        self.position = nn.Parameter(torch.randn(a.seq_length, 1, a.hidden) * 0.02)
        self.blocks = nn.ModuleList(Block(a.hidden, a.heads) for _ in range(a.layers))
        self.norm = nn.LayerNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab)
        self.checkpoint = None  # a function(block, x) when activations are recomputed

    def forward(self, images, text, sp_slice):
        img = self.image_encoder(images).flatten(2).permute(2, 0, 1)   # [patches, b, hidden]
        txt = self.text_encoder(text.t())                              # [text, b, hidden]
        x = (torch.cat([img, txt], dim=0) + self.position)[sp_slice]   # this rank's part of the sequence
        for block in self.blocks:
            x = self.checkpoint(block, x) if self.checkpoint else block(x)
        return self.head(self.norm(x))                                 # [s/p, b, vocab]


def synthetic_batch(a, step, dp_rank, device, dtype):
    """Images and text for one step of one data-parallel group, the same on every rank of it: a class
    per sample sets its image's pattern and its text's sequence, so the loss can fall."""
    g = torch.Generator().manual_seed(a.seed * 1000003 + step * 7919 + dp_rank)
    b, patches = a.micro_batch, (a.image_size // a.patch) ** 2
    text_len = a.seq_length - patches
    cls = torch.randint(0, 16, (b,), generator=g)
    base = torch.Generator().manual_seed(a.seed)
    templates = torch.randn(16, 3, a.image_size, a.image_size, generator=base)
    images = templates[cls] + 0.5 * torch.randn(b, 3, a.image_size, a.image_size, generator=g)
    offsets = torch.arange(text_len).unsqueeze(0)
    text = (cls.unsqueeze(1) * 31 + offsets * (cls.unsqueeze(1) + 1)) % a.vocab
    # Labels over the whole fused sequence: a text position predicts the next text token; image
    # positions and the last token predict nothing (-100).
    labels = torch.full((a.seq_length, b), -100, dtype=torch.long)
    labels[patches:-1] = text[:, 1:].t()
    return images.to(device=device, dtype=dtype), text.to(device), labels.to(device)


# --- Optimizer and offloading (plain PyTorch) ------------------------------------------------------


class OffloadedAdam(object):
    """AdamW whose state is explicit tensors, so where it lives (device, or host between steps) and
    what moves are this script's, counted byte for byte. Under bf16 it keeps fp32 master weights, as
    mixed-precision training (and ZeRO) does; they count as optimizer state."""

    def __init__(self, params, a, device):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.wd = a.lr, (0.9, 0.999), 1e-8, 0.0
        self.device, self.t = device, 0
        self.offload_state = a.offload in ("optimizer", "optimizer_params")
        self.offload_params = a.offload == "optimizer_params"
        self.master = a.precision != "fp32"
        self.state = []
        for p in self.params:
            s = {"m": torch.zeros(p.shape, dtype=torch.float32, device=device),
                 "v": torch.zeros(p.shape, dtype=torch.float32, device=device)}
            if self.master:
                s["w"] = p.detach().float().clone()
            self.state.append(s)
        self.state_bytes = sum(nbytes(t) for s in self.state for t in s.values())
        self.param_bytes = sum(nbytes(p) for p in self.params)
        pin = device.type == "cuda"
        self.host_state = None
        if self.offload_state:
            self.host_state = [dict((k, _host_copy(t, pin)) for k, t in s.items()) for s in self.state]
            self._free_state()
        self.host_params = None
        if self.offload_params:
            self.host_params = [_host_copy(p.detach(), pin) for p in self.params]
            self._free_params()

    # Offload transfers: each one a real copy between separate buffers, counted.
    def fetch_params(self):
        if not self.offload_params:
            return
        with MARKS.phase("offload_transfer"):
            for p, h in zip(self.params, self.host_params):
                p.data = torch.empty(h.shape, dtype=h.dtype, device=self.device)
                p.data.copy_(h)
                MOVED.add("h2d_bytes", nbytes(h))

    def _write_back_params(self):
        with MARKS.phase("offload_transfer"):
            for p, h in zip(self.params, self.host_params):
                h.copy_(p.data)
                MOVED.add("d2h_bytes", nbytes(h))
        self._free_params()

    def _free_params(self):
        for p in self.params:
            p.data = torch.empty(0, dtype=p.dtype, device=self.device)

    def _fetch_state(self):
        with MARKS.phase("offload_transfer"):
            for s, hs in zip(self.state, self.host_state):
                for k, h in hs.items():
                    s[k] = torch.empty(h.shape, dtype=h.dtype, device=self.device)
                    s[k].copy_(h)
                    MOVED.add("h2d_bytes", nbytes(h))

    def _write_back_state(self):
        with MARKS.phase("offload_transfer"):
            for s, hs in zip(self.state, self.host_state):
                for k, h in hs.items():
                    h.copy_(s[k])
                    MOVED.add("d2h_bytes", nbytes(h))
        self._free_state()

    def _free_state(self):
        for s in self.state:
            for k in list(s):
                s[k] = None

    def step(self):
        if self.offload_state:
            self._fetch_state()
        with MARKS.phase("optimizer_step"):
            self.t += 1
            b1, b2 = self.betas
            c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
            with torch.no_grad():
                for p, s in zip(self.params, self.state):
                    g = p.grad.float()
                    s["m"].mul_(b1).add_(g, alpha=1 - b1)
                    s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
                    w = s["w"] if self.master else p.data
                    w.mul_(1 - self.lr * self.wd)
                    w.addcdiv_(s["m"] / c1, (s["v"] / c2).sqrt_().add_(self.eps), value=-self.lr)
                    if self.master:
                        p.data.copy_(w)
                    p.grad = None
        if self.offload_state:
            self._write_back_state()
        if self.offload_params:
            self._write_back_params()


def _host_copy(t, pin):
    h = torch.empty(t.shape, dtype=t.dtype, device="cpu")
    h.copy_(t)
    return h.pin_memory() if pin else h


def allreduce_grads(params, world):
    """Sums the gradients over every rank (sequence parts add up; data-parallel copies average)."""
    if world.size == 1:
        return
    with MARKS.phase("grad_allreduce"):
        grads = [p.grad for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        MOVED.add("allreduce_bytes", nbytes(flat))
        flat /= world.dp
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()


# --- The loop -------------------------------------------------------------------------------------


class Throughput(object):
    """DeepSpeed's ThroughputTimer line: a running average over the steps after the first (warm-up)."""

    def __init__(self, samples_per_step, micro_per_step, device):
        self.samples, self.micro, self.device = samples_per_step, micro_per_step, device
        self.total_time, self.counted = 0.0, 0

    def line(self, step, elapsed):
        if step > 1:
            self.total_time += elapsed
            self.counted += 1
        avg = self.samples * self.counted / self.total_time if self.total_time > 0 else self.samples / elapsed
        if self.device.type == "cuda":
            mem, peak = torch.cuda.memory_allocated() / 2 ** 30, torch.cuda.max_memory_allocated() / 2 ** 30
        else:  # on CPU: the process's resident memory (peak RSS), as DeepSpeed has no figure there
            mem = peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
        return ("epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.4f, CurrSamplesPerSec=%.4f, "
                "MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB" % (step * self.micro, step, avg, self.samples / elapsed, mem, peak))


def main(argv=None):
    global MARKS
    a = parse_args(sys.argv[1:] if argv is None else argv)
    ds_config = settle_knobs(a)
    engine = a.engine
    if engine == "auto":
        try:
            import deepspeed  # noqa: F401
            engine = "deepspeed"
        except ImportError:
            engine = "torch"
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    rank, size, local, addr, port = world_from_env(a)
    world = World(rank, size, local, a.sp)
    patches = (a.image_size // a.patch) ** 2
    if a.seq_length <= patches + 1:
        fail("--seq-length %d leaves no text after %d image patches" % (a.seq_length, patches))
    if a.seq_length % a.sp or a.heads % a.sp or a.hidden % a.heads:
        fail("--seq-length and --heads must be multiples of --ulysses-degree, --hidden of --heads")
    if a.device == "auto":
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device("cuda", local % max(1, torch.cuda.device_count())) if a.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if engine == "torch" and a.precision == "fp16":
        fail("--precision fp16 needs loss scaling: use DeepSpeed (fp16.enabled) or bf16")
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[a.precision]

    if size > 1:
        os.environ.setdefault("MASTER_ADDR", addr)
        os.environ.setdefault("MASTER_PORT", str(port))
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(size))
        os.environ.setdefault("LOCAL_RANK", str(local))
        backend = "nccl" if device.type == "cuda" else "gloo"
        if engine == "deepspeed":
            import deepspeed
            deepspeed.init_distributed(dist_backend=backend)
        else:
            dist.init_process_group(backend, init_method="tcp://%s:%d" % (addr, port), rank=rank, world_size=size)
    MARKS = Marks(a.mark_ranks == "all" or local == 0)

    torch.manual_seed(a.seed)  # the same initial weights on every rank
    torch.use_deterministic_algorithms(device.type == "cpu")
    model = MultimodalModel(a).to(device=device, dtype=dtype)
    step_fn = train_torch if engine == "torch" else train_deepspeed
    step_fn(a, ds_config, model, world, device, dtype)
    if size > 1:
        dist.barrier()
        dist.destroy_process_group()


def say(world, line):
    if world.rank == 0:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def config_line(a, engine, world, param_bytes, state_bytes, n_params):
    # bytes=counted: every byte in bytes_moved was copied or sent by this script; bytes=estimated:
    # DeepSpeed moved them, and the host<->device figures are ZeRO-Offload's model (train_deepspeed).
    return ("config engine=%s offload=%s checkpointing=%s sp=%d dp=%d world=%d precision=%s micro_batch=%d "
            "grad_accum=%d seq_length=%d steps=%d params=%d param_bytes=%d optimizer_state_bytes=%d bytes=%s run=%s" % (
                engine, a.offload, "on" if a.checkpointing else "off", world.sp, world.dp, world.size, a.precision,
                a.micro_batch, a.grad_accum, a.seq_length, a.steps, n_params, param_bytes, state_bytes,
                "counted" if engine == "torch" else "estimated", a.run_name or "-"))


def finish(a, world, device, losses):
    """The run's totals over every rank (one small all-reduce after the last step)."""
    # On the device: NCCL reduces only GPU tensors.
    totals = torch.tensor([MOVED.total[k] for k in Moved.KINDS], dtype=torch.float64, device=device)
    if world.size > 1:
        dist.all_reduce(totals)
    say(world, "bytes_moved_total steps=%d ranks=%d %s" % (
        a.steps, world.size, " ".join("%s=%d" % (k, int(v)) for k, v in zip(Moved.KINDS, totals.tolist()))))
    say(world, "final_loss=%.6f" % losses[-1])


def run_steps(a, world, device, one_step, mark_steps=True):
    """The loop both engines share: time, print and count each step."""
    timer = Throughput(a.micro_batch * a.grad_accum * world.dp, a.grad_accum, device)
    losses = []
    for step in range(1, a.steps + 1):
        start = time.perf_counter()
        loss = one_step(step)
        if device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        losses.append(loss)
        if mark_steps:
            MARKS.step()
        moved = MOVED.end_step()
        if step % a.steps_per_print == 0 or step == a.steps:
            say(world, "%s, loss=%.6f" % (timer.line(step, elapsed), loss))
        else:
            timer.line(step, elapsed)
        say(world, "bytes_moved step=%d %s" % (step, " ".join("%s=%d" % (k, moved[k]) for k in Moved.KINDS)))
    finish(a, world, device, losses)


def micro_batches(a, step):
    """The data indices of optimizer step `step`'s micro-batches (1-based, one sequence over the run)."""
    return range((step - 1) * a.grad_accum + 1, step * a.grad_accum + 1)


def sequence_slice(a, world):
    part = a.seq_length // world.sp
    return slice(world.sp_rank * part, (world.sp_rank + 1) * part)


def local_loss(logits, labels, sp_slice):
    """This rank's share of the sample's mean loss: its tokens' loss over the sample's token count."""
    local = labels[sp_slice]
    total = (labels != -100).sum().clamp(min=1)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), local.reshape(-1),
                           ignore_index=-100, reduction="sum") / total


def train_torch(a, _ds_config, model, world, device, dtype):
    world.make_groups()
    for block in model.blocks:
        block.attention = PlainUlysses(world.sp_group, world.sp)
    if a.checkpointing:
        from torch.utils.checkpoint import checkpoint

        # Non-reentrant: recomputation in backward re-runs the all-to-alls, which count again.
        model.checkpoint = lambda block, x: checkpoint(block, x, use_reentrant=False)
    params = [p for p in model.parameters()]
    n_params = sum(p.numel() for p in params)  # before offloading frees the device copies
    optimizer = OffloadedAdam(params, a, device)
    say(world, config_line(a, "torch", world, optimizer.param_bytes, optimizer.state_bytes, n_params))
    sp_slice = sequence_slice(a, world)

    def one_step(step):
        optimizer.fetch_params()
        total = 0.0
        for micro in micro_batches(a, step):
            images, text, labels = synthetic_batch(a, micro, world.dp_rank, device, dtype)
            with MARKS.phase("forward"):
                loss = local_loss(model(images, text, sp_slice), labels, sp_slice) / a.grad_accum
            with MARKS.phase("backward"):
                loss.backward()  # gradients add up over the micro-batches
            total = total + loss.detach()
        allreduce_grads(params, world)
        optimizer.step()
        return reduce_loss(total, world)

    run_steps(a, world, device, one_step)


def reduce_loss(loss, world):
    """The mean sample loss over the world, for printing (sequence parts add, data-parallel copies average)."""
    if world.size == 1:
        return float(loss)
    t = loss.float().reshape(1).clone()
    dist.all_reduce(t)
    MOVED.add("allreduce_bytes", nbytes(t))
    return float(t) / world.dp


# --- DeepSpeed ------------------------------------------------------------------------------------
# Written against DeepSpeed's documented API (deepspeed.initialize with a config dict, ZeRO stage 3
# offload_optimizer/offload_param, deepspeed.checkpointing.configure/checkpoint,
# deepspeed.sequence.layer.DistributedAttention, the engine's seq_parallel_group from
# "sequence_parallel_size"). DeepSpeed is not installable on erg's development machines, so erg's
# tests do not run this path; docs/study.md says how to check it on a site that has DeepSpeed.


def deepspeed_config(a, config, world):
    """The config DeepSpeed gets: --deepspeed's file, or one built from the options (the same knobs)."""
    config = dict(config or {})
    config.setdefault("train_micro_batch_size_per_gpu", a.micro_batch)
    config.setdefault("gradient_accumulation_steps", a.grad_accum)
    config.setdefault("steps_per_print", a.steps_per_print)
    if a.precision == "bf16":
        config.setdefault("bf16", {"enabled": True})
    elif a.precision == "fp16":
        config.setdefault("fp16", {"enabled": True})
    zero = dict(config.get("zero_optimization") or {})
    zero.setdefault("stage", 3)
    device_of = {"none": ("none", "none"), "optimizer": ("cpu", "none"), "optimizer_params": ("cpu", "cpu")}
    opt_dev, par_dev = device_of[a.offload]
    zero.setdefault("offload_optimizer", {"device": opt_dev, "pin_memory": True})
    zero.setdefault("offload_param", {"device": par_dev, "pin_memory": True})
    config["zero_optimization"] = zero
    # With offload_optimizer DeepSpeed runs its CPU Adam on the host; without it, its fused Adam.
    config.setdefault("optimizer", {"type": "AdamW", "params": {"lr": a.lr, "weight_decay": 0.0} })
    if world.sp > 1:
        config["sequence_parallel_size"] = world.sp
    return config


def train_deepspeed(a, config, model, world, device, dtype):
    import deepspeed

    config = deepspeed_config(a, config, world)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    group = engine.seq_parallel_group if world.sp > 1 else None
    for block in model.blocks:
        block.attention = DeepSpeedUlysses(group, world.sp)
    if a.checkpointing:
        # partition_activations splits checkpoints over model-parallel ranks; this model has none, so
        # the study's switch means "checkpoint every block" and partitioning stays off.
        cpu = bool((config.get("activation_checkpointing") or {}).get("cpu_checkpointing"))
        deepspeed.checkpointing.configure(None, partition_activations=False, contiguous_checkpointing=False,
                                          num_checkpoints=a.layers, checkpoint_in_cpu=cpu)
        model.checkpoint = lambda block, x: deepspeed.checkpointing.checkpoint(block, x)
    n_params = sum(getattr(p, "ds_numel", p.numel()) for p in model.parameters())
    elem = torch.tensor([], dtype=dtype).element_size()
    # ZeRO-3 partitions over the data-parallel ranks; the bytes below are this rank's partition.
    param_bytes = n_params * elem // max(1, world.size // world.sp)
    state_bytes = n_params * (8 + (4 if a.precision != "fp32" else 0)) // max(1, world.size // world.sp)
    say(world, config_line(a, "deepspeed", world, param_bytes, state_bytes, n_params))
    # erg_ds_phases (examples/gh200-deepspeed-energy.yaml) may have wrapped the engine already: then
    # its marks stand and these would nest inside marks of the same names.
    marked = getattr(engine.forward, "_erg_marked", False)
    phase = (lambda name: _NoPhase) if marked else MARKS.phase
    sp_slice = sequence_slice(a, world)

    def one_step(step):
        total = 0.0
        # engine.step() at every micro-batch: DeepSpeed applies the optimizer at the accumulation
        # boundary (and scales the loss by gradient_accumulation_steps itself).
        for micro in micro_batches(a, step):
            images, text, labels = synthetic_batch(a, micro, world.dp_rank, engine.device, dtype)
            with phase("forward"):
                loss = local_loss(engine(images, text, sp_slice), labels, sp_slice)
            with phase("backward"):
                engine.backward(loss)
            with phase("optimizer_step"):
                engine.step()
            total = total + loss.detach() / a.grad_accum
        # Host<->device bytes per step as ZeRO-Offload moves them, estimated (bytes=estimated on the
        # config line), not measured: this rank's gradient partition down to the CPU optimizer and its
        # updated parameters back up; with offload_param the parameters are also fetched for forward
        # and again for backward. The all-to-all bytes are the exchanged tensors' sizes, as above.
        if a.offload != "none":
            MOVED.add("d2h_bytes", param_bytes)
            MOVED.add("h2d_bytes", param_bytes * (3 if a.offload == "optimizer_params" else 1))
        return reduce_loss(total, world)

    run_steps(a, world, device, one_step, mark_steps=not marked)  # erg_ds_phases counts steps itself


if __name__ == "__main__":
    main()
