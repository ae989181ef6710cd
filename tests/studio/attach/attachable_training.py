"""A small training loop for the studio's attach tests, started as `rtorch run --attach attachable_training.py`.

It profiles itself (so the agent streams this session, with steps) and touches $RT_TEST_READY_FILE once the
profile records, so a test attaches only then. It trains until killed, or for $RT_TEST_STEPS steps, resting
$RT_TEST_PAUSE_S seconds (default 0.01) after each.
"""
import os
import time

import rustytorch as rt

steps = int(os.environ.get("RT_TEST_STEPS", "0"))
pause_s = float(os.environ.get("RT_TEST_PAUSE_S", "0.01"))
rt.manual_seed(int(os.environ.get("RANK", "0")))
model = rt.nn.Sequential(rt.nn.Linear(128, 256), rt.nn.ReLU(), rt.nn.Linear(256, 10))
opt = rt.optim.SGD(model.parameters(), lr=0.05)
with rt.profiler.profile(record_shapes=True, profile_memory=True) as prof:
    ready = os.environ.get("RT_TEST_READY_FILE")
    if ready:
        open(ready, "w").close()
    step = 0
    while steps == 0 or step < steps:
        with rt.profiler.record_function("train_step"):
            x = rt.randn(64, 128)
            y = rt.randint(0, 10, (64,))
            loss = rt.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        prof.step()
        step += 1
        time.sleep(pause_s)
