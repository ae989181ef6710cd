"""Parity with PyTorch 1.13 for F.ctc_loss and nn.CTCLoss: loss for every reduction and zero_infinity, the
gradient with respect to log_probs in float64 (torch's convention, NaN for impossible alignments), padded and
concatenated targets, lengths as tensors, tuples and lists, unbatched input, repeated labels, a blank other than
0, float32, the gradient through log_softmax to logits, and the errors for bad arguments."""
import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

REDUCTIONS = ("none", "mean", "sum")
T, N, C = 7, 5, 6
# repeated labels (1, 1 needs a blank between), an empty target, a target that fills the input, an impossible one
TARGETS = np.array([[1, 1, 2, 0], [1, 2, 3, 4], [3, 0, 0, 0], [2, 4, 2, 5], [5, 5, 5, 5]])
TARGET_LENGTHS = [3, 4, 0, 4, 4]
INPUT_LENGTHS = [7, 4, 2, 5, 6]  # element 4 (5, 5, 5, 5) needs 7 steps: impossible


def log_probs(seed, shape=(T, N, C), dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal(shape)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(dtype)


def both(lp, targets, il, tl, as_tensors=True, **kw):
    """(rt loss, rt grad, torch loss, torch grad) for the sum of the loss."""
    tlp = torch.tensor(lp, requires_grad=True)
    rlp = rt.tensor(lp).requires_grad_()
    conv_t = (lambda v: torch.tensor(v)) if as_tensors else tuple
    conv_r = (lambda v: rt.tensor(v)) if as_tensors else tuple
    tl_t = TF.ctc_loss(tlp, torch.tensor(targets), conv_t(il), conv_t(tl), **kw)
    rl = RF.ctc_loss(rlp, rt.tensor(targets), conv_r(il), conv_r(tl), **kw)
    tl_t.sum().backward()
    rl.sum().backward()
    return rl, rlp.grad, tl_t, tlp.grad


def check(rl, rg, tl, tg, rtol=1e-10):
    np.testing.assert_allclose(rl.detach().numpy(), tl.detach().numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(rg.numpy(), tg.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_loss_and_gradient_match_torch(reduction, zero_infinity):
    rl, rg, tl, tg = both(log_probs(0), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction=reduction,
                          zero_infinity=zero_infinity)
    check(rl, rg, tl, tg)


def test_impossible_alignment_is_inf_with_nan_gradient_as_torch():
    rl, rg, tl, tg = both(log_probs(1), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="none")
    assert np.isinf(rl.detach().numpy()[4]) and np.isfinite(rl.detach().numpy()[:4]).all()
    g = rg.numpy()
    assert np.isnan(g[:6, 4]).all() and (g[6:, 4] == 0).all()  # NaN within the input length, as torch
    check(rl, rg, tl, tg)


def test_zero_infinity_gives_zero_loss_and_gradient_for_impossible():
    rl, rg, tl, tg = both(log_probs(2), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="none",
                          zero_infinity=True)
    assert rl.detach().numpy()[4] == 0 and (rg.numpy()[:, 4] == 0).all()
    check(rl, rg, tl, tg)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_concatenated_targets(reduction):
    flat = np.concatenate([row[:n] for row, n in zip(TARGETS, TARGET_LENGTHS)])
    check(*both(log_probs(3), flat, INPUT_LENGTHS, TARGET_LENGTHS, reduction=reduction, zero_infinity=True))


@pytest.mark.parametrize("container", [tuple, list])
def test_lengths_as_tuples_and_lists(container):
    lp = log_probs(4)
    tlp, rlp = torch.tensor(lp, requires_grad=True), rt.tensor(lp).requires_grad_()
    tl = TF.ctc_loss(tlp, torch.tensor(TARGETS), container(INPUT_LENGTHS), container(TARGET_LENGTHS),
                     zero_infinity=True)
    rl = RF.ctc_loss(rlp, rt.tensor(TARGETS), container(INPUT_LENGTHS), container(TARGET_LENGTHS),
                     zero_infinity=True)
    tl.backward()
    rl.backward()
    check(rl, rlp.grad, tl, tlp.grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_unbatched(reduction):
    lp = log_probs(5, (T, C))
    tlp, rlp = torch.tensor(lp, requires_grad=True), rt.tensor(lp).requires_grad_()
    tl = TF.ctc_loss(tlp, torch.tensor([2, 2, 3]), torch.tensor(6), torch.tensor(3), reduction=reduction)
    rl = RF.ctc_loss(rlp, rt.tensor([2, 2, 3]), rt.tensor(6), rt.tensor(3), reduction=reduction)
    assert tuple(rl.shape) == tuple(tl.shape)
    tl.sum().backward()
    rl.sum().backward()
    check(rl, rlp.grad, tl, tlp.grad)


def test_blank_other_than_zero_and_blank_inside_a_target():
    targets = TARGETS.copy()
    targets[0, 0] = 3  # the blank, used as a label: torch treats it as an ordinary label
    check(*both(log_probs(6), targets, INPUT_LENGTHS, TARGET_LENGTHS, blank=3, reduction="sum",
                zero_infinity=True))


def test_float32_and_int32_indices():
    lp = log_probs(7, dtype=np.float32)
    tlp, rlp = torch.tensor(lp, requires_grad=True), rt.tensor(lp).requires_grad_()
    tl = TF.ctc_loss(tlp, torch.tensor(TARGETS, dtype=torch.int32), torch.tensor(INPUT_LENGTHS, dtype=torch.int32),
                     torch.tensor(TARGET_LENGTHS, dtype=torch.int32), zero_infinity=True)
    rl = RF.ctc_loss(rlp, rt.tensor(TARGETS, dtype=rt.int32), rt.tensor(INPUT_LENGTHS, dtype=rt.int32),
                     rt.tensor(TARGET_LENGTHS, dtype=rt.int32), zero_infinity=True)
    assert rl.dtype == rt.float32
    tl.backward()
    rl.backward()
    check(rl, rlp.grad, tl, tlp.grad, rtol=1e-5)


def test_gradient_to_logits_through_log_softmax_and_module():
    logits = np.random.default_rng(8).standard_normal((T, N, C))
    tx, rx = torch.tensor(logits, requires_grad=True), rt.tensor(logits).requires_grad_()
    tl = torch.nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)(
        tx.log_softmax(2), torch.tensor(TARGETS), torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS))
    rl = rt.nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)(
        rx.log_softmax(2), rt.tensor(TARGETS), rt.tensor(INPUT_LENGTHS), rt.tensor(TARGET_LENGTHS))
    tl.backward()
    rl.backward()
    check(rl, rx.grad, tl, tx.grad)


def test_long_sequence_stays_finite():
    lp = log_probs(9, (60, 2, 4))
    targets = np.array([[1, 2, 3, 1, 2, 3, 1, 2, 3, 1], [3, 3, 3, 2, 2, 2, 1, 1, 1, 1]])
    check(*both(lp, targets, [60, 45], [10, 10], reduction="none"))


def test_ctc_module_defaults_and_repr():
    m = rt.nn.CTCLoss()
    t = torch.nn.CTCLoss()
    assert (m.blank, m.reduction, m.zero_infinity) == (t.blank, t.reduction, t.zero_infinity)
    assert repr(m) == repr(t) == "CTCLoss()"
    with pytest.raises(ValueError, match="reduction"):
        rt.nn.CTCLoss(reduction="batchmean")


def test_input_length_zero():  # torch 1.13 reads uninitialised state here; rustytorch: 0 or inf
    lp = rt.tensor(log_probs(10))
    loss = RF.ctc_loss(lp, rt.tensor(TARGETS), [0] * N, [0, 1, 0, 2, 0], reduction="none").numpy()
    assert loss[0] == 0 and loss[2] == 0 and loss[4] == 0 and np.isinf(loss[1]) and np.isinf(loss[3])


def test_errors():
    lp = rt.tensor(log_probs(11))
    tg, il, tl = rt.tensor(TARGETS), rt.tensor(INPUT_LENGTHS), rt.tensor(TARGET_LENGTHS)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 7"):
        RF.ctc_loss(lp, tg, rt.tensor([8, 1, 1, 1, 1]), tl)
    with pytest.raises(RuntimeError, match="size at least 5 at dimension 1"):
        RF.ctc_loss(lp, tg, il, rt.tensor([5, 1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        RF.ctc_loss(lp, tg, il, tl, blank=6)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        RF.ctc_loss(lp, tg, il[:2], tl)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        RF.ctc_loss(lp, tg, il, tl, reduction="foo")
    with pytest.raises(RuntimeError, match="size 15 at dimension 0"):
        RF.ctc_loss(lp, rt.tensor([1, 2, 3]), il, tl)
    with pytest.raises(TypeError, match="targets must be an integer tensor"):
        RF.ctc_loss(lp, tg.double(), il, tl)
    with pytest.raises(TypeError, match="input_lengths must hold integers"):
        RF.ctc_loss(lp, tg, il.double(), tl)
    with pytest.raises(TypeError, match="integer tensor or a tuple/list of ints"):
        RF.ctc_loss(lp, tg, 7, tl)
    with pytest.raises(TypeError, match="float32 or float64"):
        RF.ctc_loss(lp.half(), tg, il, tl)
    with pytest.raises(RuntimeError, match=r"class indices in \[0, 6\)"):
        RF.ctc_loss(lp, rt.tensor(TARGETS + 3), il, tl)
    with pytest.raises(RuntimeError, match="target_lengths must be >= 0"):
        RF.ctc_loss(lp, tg, il, rt.tensor([-1, 1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match=r"\(T, N, C\)"):
        RF.ctc_loss(lp.unsqueeze(0), tg, il, tl)


def test_autocast_runs_ctc_in_float32_as_torch():
    lp = log_probs(12)
    tl = torch.tensor(lp).bfloat16()
    rl = rt.tensor(lp).to(rt.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        t_loss = TF.ctc_loss(tl, torch.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS, zero_infinity=True)
    with rt.autocast("cpu", dtype=rt.bfloat16):
        r_loss = RF.ctc_loss(rl, rt.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS, zero_infinity=True)
    assert r_loss.dtype == rt.float32 and t_loss.dtype == torch.float32
    np.testing.assert_allclose(r_loss.item(), t_loss.item(), rtol=1e-5)
