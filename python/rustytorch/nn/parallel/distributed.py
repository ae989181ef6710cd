"""DistributedDataParallel: one model replica per process; gradients averaged across the group during
backward, bucket by bucket, so communication overlaps the rest of the backward pass (torch's DDP).

    dist.init_process_group("gloo")
    model = DistributedDataParallel(Net())
    for x, y in loader:                      # each rank reads its own shard (DistributedSampler)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward()     # all-reduces run while backward goes on
        opt.step()                           # every rank applies the same averaged gradients

How it works (torch's reducer, in Python over the engine's hooks):
- At construction every rank checks that the parameters match rank 0's (names, shapes, dtypes) and takes
  rank 0's parameters and buffers (one broadcast per dtype).
- Parameters that need gradients go into buckets in reverse registration order (roughly the order backward
  produces their gradients); a bucket closes once it holds at least 1 MiB (the first) or bucket_cap_mb (the
  others), as torch assigns them. After the
  first iteration the buckets are rebuilt once, in the order gradients actually arrived (rank 0's order,
  broadcast, so every rank agrees).
- A post-accumulate hook on each parameter copies its gradient into its bucket; a full bucket is divided by
  the world size and all-reduced asynchronously, buckets strictly in order so every rank issues the same
  sequence of collectives. The last gradient of the backward waits for the outstanding all-reduces and
  writes the averaged gradients back into .grad.
- A parameter that got no gradient leaves its bucket incomplete: the next forward raises an error naming
  it by module path (find_unused_parameters=True handles such models, at the cost of a graph walk per step).
"""
import contextlib

import rustytorch as rt
import rustytorch.distributed as dist

from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024


class _GradBucket:
    """What a communication hook gets (torch.distributed.GradBucket)."""

    def __init__(self, bucket, is_last):
        self._bucket = bucket
        self._is_last = is_last

    def index(self):
        return self._bucket.index

    def buffer(self):
        return self._bucket.buffer

    def set_buffer(self, tensor):
        self._bucket.buffer.copy_(tensor)

    def is_last(self):
        return self._is_last

    def parameters(self):
        return list(self._bucket.params)

    def gradients(self):
        return [self._bucket.buffer[o:o + n].view(p.shape)
                for p, o, n in zip(self._bucket.params, self._bucket.offsets, self._bucket.numels)]


class _Bucket:
    def __init__(self, index, params, names):
        self.index = index
        self.params = params
        self.names = names
        self.numels = [p.numel() for p in params]
        self.offsets = []
        total = 0
        for n in self.numels:
            self.offsets.append(total)
            total += n
        self.buffer = rt.zeros(total, dtype=params[0].dtype)
        self.pending = len(params)
        self.future = None


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel needs a process group: call "
                               "rustytorch.distributed.init_process_group(...) first")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("DistributedDataParallel: one device per process; device_ids must hold at most one device")
        if bucket_cap_mb is None or bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._world_size = dist.get_world_size(process_group)
        self._rank = dist.get_rank(process_group)

        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module has no parameter that requires "
                               "a gradient")
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._index_of = {id(p): i for i, p in enumerate(self._params)}
        self._verify_same_parameters()
        self._sync_module_states(rank0_buffers=True)

        self._comm_hook = None
        self._comm_state = None
        self._grad_accumulators = []
        self._hook_handles = []
        for i, p in enumerate(self._params):
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            self._grad_accumulators.append(acc)  # kept alive: the hook lives on this node
            self._hook_handles.append(acc._register_post_accumulate_hook(self._make_hook(i)))

        self._buckets = self._build_buckets(list(reversed(range(len(self._params)))), first_bucket=True)
        self._rebuilt = False
        self._arrival_order = []
        self._armed = False        # a forward with grad sync ran: its backward will reduce
        self._ready = [False] * len(self._params)
        self._next_bucket = 0      # the first bucket not yet launched
        self._unused = set()
        self._locally_used = None

    # ---- construction ------------------------------------------------------------------
    def _verify_same_parameters(self):
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in zip(self._param_names, self._params)]
        everyone = [None] * self._world_size
        dist.all_gather_object(everyone, mine, group=self.process_group)
        reference = everyone[0]
        for r, theirs in enumerate(everyone):
            if theirs == reference:
                continue
            if len(theirs) != len(reference):
                raise RuntimeError(f"DistributedDataParallel: rank {r} has {len(theirs)} parameters that require "
                                   f"gradients but rank 0 has {len(reference)}; every rank must build the same model")
            for (n0, s0, d0), (n1, s1, d1) in zip(reference, theirs):
                if (n0, s0, d0) != (n1, s1, d1):
                    raise RuntimeError(f"DistributedDataParallel: parameter {n1} on rank {r} is {list(s1)} {d1} but "
                                       f"rank 0's {n0} is {list(s0)} {d0}; every rank must build the same model")

    def _sync_module_states(self, rank0_buffers):
        tensors = [p for p in self.module.parameters()]
        if rank0_buffers:
            tensors += [b for b in self.module.buffers()]
        self._broadcast_coalesced(tensors)

    def _broadcast_coalesced(self, tensors):
        src = dist.get_global_rank(self.process_group, 0) if self.process_group is not None else 0
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with rt.no_grad():
            for dtype, group in by_dtype.items():
                flat = rt.cat([t.detach().reshape(-1) for t in group]) if group else None
                dist.broadcast(flat, src=src, group=self.process_group)
                offset = 0
                for t in group:
                    n = t.numel()
                    t.copy_(flat[offset:offset + n].view(t.shape))
                    offset += n

    def _build_buckets(self, order, first_bucket):
        # torch's rule: a parameter joins the open bucket, which closes once it holds at least the cap (the
        # first bucket's cap is the smaller one), or when the dtype changes.
        buckets, current, current_bytes = [], [], 0
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap) if first_bucket else self.bucket_bytes_cap
        for i in order:
            p = self._params[i]
            if current and self._params[current[0]].dtype != p.dtype:
                buckets.append(current)
                current, current_bytes, cap = [], 0, self.bucket_bytes_cap
            current.append(i)
            current_bytes += p.numel() * p.element_size()
            if current_bytes >= cap:
                buckets.append(current)
                current, current_bytes, cap = [], 0, self.bucket_bytes_cap
        if current:
            buckets.append(current)
        self._bucket_of = {}
        result = []
        for b, members in enumerate(buckets):
            for slot, i in enumerate(members):
                self._bucket_of[i] = (b, slot)
            result.append(_Bucket(b, [self._params[i] for i in members], [self._param_names[i] for i in members]))
        return result

    # ---- public API ----------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside this block; the first backward after it all-reduces them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """hook(state, bucket) -> Future[Tensor] replaces the all-reduce of each bucket (before the first
        backward, once)."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook can be called only once")
        if not callable(hook):
            raise TypeError("register_comm_hook: hook must be callable as hook(state, bucket) -> Future")
        self._comm_hook = hook
        self._comm_state = state

    def bucket_sizes(self):
        """The parameters of each bucket in launch order (names): what the tests and the studio show."""
        return [list(b.names) for b in self._buckets]

    # ---- forward --------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if rt.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward()
        else:
            self._armed = False
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers and self._world_size > 1:
                self._broadcast_coalesced(buffers)
        output = self.module(*inputs, **kwargs)
        if self._armed and self.find_unused_parameters:
            self._mark_unused(output)
        return output

    def _prepare_for_backward(self):
        if self._armed and any(self._ready) and not all(self._ready):
            missing = [self._param_names[i] for i, r in enumerate(self._ready) if not r]
            raise RuntimeError(
                "DistributedDataParallel: the previous backward did not finish reducing gradients: these parameters "
                f"received no gradient on rank {self._rank}: {', '.join(missing)}. Hint: pass "
                "find_unused_parameters=True to DistributedDataParallel if some parameters are not used in every "
                "forward, or make sure every forward output takes part in the loss")
        if self._armed and all(self._ready) and not self._rebuilt and self._arrival_order:
            self._rebuild_buckets()
        self._armed = True
        self._ready = [False] * len(self._params)
        self._arrival_order = []
        self._next_bucket = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.future = None
        self._unused = set()

    def _rebuild_buckets(self):
        order = [list(self._arrival_order)]
        dist.broadcast_object_list(order, src=dist.get_global_rank(self.process_group, 0)
                                   if self.process_group is not None else 0, group=self.process_group)
        self._buckets = self._build_buckets(order[0], first_bucket=True)
        self._rebuilt = True

    def _mark_unused(self, output):
        reached = set()
        stack = [t.grad_fn for t in _tensors_in(output) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.name() == "AccumulateGrad":
                reached.add(id(node.variable))
                continue
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        self._locally_used = rt.zeros(len(self._params), dtype=rt.int32)
        for i, p in enumerate(self._params):
            if id(p) in reached:
                self._locally_used[i] = 1
            else:
                self._unused.add(i)
        for i in sorted(self._unused):
            self._mark_ready(i, None)

    # ---- backward -------------------------------------------------------------------------
    def _make_hook(self, index):
        def hook(param):
            if not self._armed or not self.require_backward_grad_sync or self._ready[index]:
                return
            self._mark_ready(index, param.grad)
        return hook

    def _mark_ready(self, index, grad):
        self._ready[index] = True
        self._arrival_order.append(index)
        b, slot = self._bucket_of[index]
        bucket = self._buckets[b]
        o, n = bucket.offsets[slot], bucket.numels[slot]
        with rt.no_grad():
            if grad is None:
                bucket.buffer[o:o + n] = 0
            else:
                bucket.buffer[o:o + n].copy_(grad.reshape(-1))
        bucket.pending -= 1
        # Asking launched all-reduces whether they are done drives MPI's progress engine, which advances a
        # non-blocking collective only inside MPI calls (gloo's workers need no help; the check is cheap).
        for launched in self._buckets[:self._next_bucket]:
            if launched.future is not None:
                launched.future.done()
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _launch(self, bucket):
        is_last = bucket.index == len(self._buckets) - 1
        if self._comm_hook is not None:
            bucket.future = self._comm_hook(self._comm_state, _GradBucket(bucket, is_last))
        else:
            with rt.no_grad():
                bucket.buffer.div_(self._world_size)
            bucket.future = dist.all_reduce(bucket.buffer, group=self.process_group, async_op=True).get_future()

    def _finalize(self):
        globally_used = None
        if self.find_unused_parameters and self._locally_used is not None:
            globally_used = self._locally_used.clone()
            dist.all_reduce(globally_used, group=self.process_group)
        with rt.no_grad():
            for bucket in self._buckets:
                result = bucket.future.wait()
                if isinstance(result, (list, tuple)):
                    result = result[0]
                for p, o, n in zip(bucket.params, bucket.offsets, bucket.numels):
                    i = self._index_of[id(p)]
                    if globally_used is not None and int(globally_used[i]) == 0:
                        continue  # no rank used it: its .grad stays as it was, as in torch
                    reduced = result[o:o + n].view(p.shape)
                    if self.gradient_as_bucket_view:
                        p.grad = reduced
                    elif p.grad is None:
                        p.grad = reduced.clone()
                    else:
                        p.grad.copy_(reduced)
                bucket.future = None
        self._locally_used = None

    # ---- state --------------------------------------------------------------------------
    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel cannot be pickled; save model.module.state_dict() instead")


def _tensors_in(obj):
    if isinstance(obj, rt.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)
