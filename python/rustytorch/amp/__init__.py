"""rt.amp: automatic mixed precision, with torch.amp's names.

    model = Net().cuda()
    opt = rt.optim.SGD(model.parameters(), lr=0.1)
    scaler = rt.amp.GradScaler("cuda")
    for x, y in loader:
        opt.zero_grad()
        with rt.autocast("cuda"):              # linear/conv/matmul in float16, losses in float32
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()         # gradients of the scaled loss: small ones survive float16
        scaler.step(opt)                       # unscales; skips the step if a gradient is inf/NaN
        scaler.update()                        # halves the scale after a skip, doubles it every 2000 clean steps

bfloat16 has float32's range, so `rt.autocast("cuda", dtype=rt.bfloat16)` (or "cpu", whose default
is bfloat16) needs no GradScaler. Which ops cast is listed in engine/include/rt/amp/autocast.h.
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd", "GradScaler"]
