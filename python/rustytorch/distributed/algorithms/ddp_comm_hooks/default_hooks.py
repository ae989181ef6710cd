"""The default DDP communication hooks: hook(process_group, bucket) -> Future[Tensor].

    model.register_comm_hook(None, default_hooks.fp16_compress_hook)   # half the bytes on the wire

state is the process group (None: the default group). Each hook averages the bucket's gradients over the
group, as DDP without a hook does."""
import rustytorch as rt
import rustytorch.distributed as dist


def _group_size(group):
    return dist.get_world_size(group)


def allreduce_hook(process_group, bucket):
    buffer = bucket.buffer()
    buffer.div_(_group_size(process_group))
    work = dist.all_reduce(buffer, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(_group_size(process_group))
    work = dist.all_reduce(compressed, group=process_group, async_op=True)

    def decompress(fut):
        decompressed = bucket.buffer()
        decompressed.copy_(fut.value()[0])
        return decompressed

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Casts the bucket to float16, all-reduces it, and casts back: half the traffic, float16's precision."""
    return _compress_hook(rt.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As fp16_compress_hook with bfloat16: float32's range with fewer mantissa bits."""
    return _compress_hook(rt.bfloat16, process_group, bucket)
