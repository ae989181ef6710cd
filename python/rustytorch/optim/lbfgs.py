"""L-BFGS (torch.optim.LBFGS): limited-memory quasi-Newton steps, each re-evaluating the model through a
closure, with an optional strong-Wolfe line search.

    opt = rt.optim.LBFGS(model.parameters(), lr=1, history_size=10, line_search_fn="strong_wolfe")
    def closure():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    for _ in range(10):
        opt.step(closure)          # up to max_iter iterations and max_eval closure calls

Contracts (PyTorch's):
- One parameter group only (ValueError otherwise); the closure is required (TypeError without one).
- step(closure) evaluates the closure once, then iterates: the search direction comes from the
  two-loop recursion over the last history_size (s, y) pairs (pairs with y . s <= 1e-10 are
  skipped); the first iteration ever takes t = min(1, 1 / sum|g|) * lr, later ones t = lr. Without
  a line search the step is x + t d; with "strong_wolfe" t comes from _strong_wolfe.strong_wolfe.
- It stops after max_iter iterations or max_eval evaluations, or when max|g| <= tolerance_grad,
  g . d > -tolerance_change, max|t d| <= tolerance_change or |loss change| < tolerance_change.
- step() returns the closure's first loss. The state lives under the first parameter with
  PyTorch's keys: "func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
  "prev_flat_grad", "prev_loss" (and "al"); scalars are Python floats where PyTorch keeps 0-dim tensors.
This is Python over engine tensors, like PyTorch's; all parameters must be on one device.
"""
import rustytorch as rt

from .._memory import memory_category
from ._strong_wolfe import strong_wolfe
from .optimizer import Optimizer

_LINE_SEARCHES = (None, "strong_wolfe")


def _dot(a, b):
    return float(rt.matmul(a, b))


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_iter < 1:
            raise ValueError(f"Invalid max_iter value: {max_iter} (LBFGS needs at least one iteration per step)")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if history_size < 1:
            raise ValueError(f"Invalid history_size value: {history_size}")
        if line_search_fn not in _LINE_SEARCHES:
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one flat vector --------------------------------------------------
    def _flat_grad(self):
        return rt.cat([p.grad.reshape(-1) if p.grad is not None else rt.zeros(p.numel(), dtype=p.dtype,
                                                                               device=p.device)
                       for p in self._params])

    def _move_params(self, t, direction):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=t)
            offset += n

    def _evaluate_along(self, closure, origin, t, direction):
        """Loss and flat gradient at origin + t * direction; the parameters are put back at origin."""
        self._move_params(t, direction)
        with rt.enable_grad():
            loss = float(closure())
        grad = self._flat_grad()
        for p, x in zip(self._params, origin):
            p.copy_(x)
        return loss, grad

    # ---- one step ---------------------------------------------------------------------------
    def step(self, closure=None):
        if closure is None:
            raise TypeError("LBFGS.step() needs a closure that clears the gradients, evaluates the model and "
                            "returns the loss after loss.backward(): opt.step(closure)")
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with rt.enable_grad():
            first_loss = closure()
        state["func_evals"] += 1
        with rt.no_grad():
            self._iterate(closure, group, state, float(first_loss))
        return first_loss

    def _iterate(self, closure, group, state, loss):
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max()) <= tolerance_grad:
            return
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        evaluations, n_iter = 1, 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = flat_grad.neg(), [], [], [], 1.0
            else:
                with memory_category("optimizer_state"):
                    y, s = flat_grad.sub(prev_flat_grad), d.mul(t)
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(old_dirs) == group["history_size"]:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                d = self._two_loop_direction(state, flat_grad, old_dirs, old_stps, ro, h_diag, group["history_size"])
            with memory_category("optimizer_state"):
                prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr if state["n_iter"] == 1 else lr
            slope = _dot(flat_grad, d)
            if slope > -tolerance_change:  # not a descent direction any more
                break
            step_evaluations, gradient_small = 0, False
            if group["line_search_fn"] == "strong_wolfe":
                origin = [p.clone() for p in self._params]
                found = strong_wolfe(lambda step: self._evaluate_along(closure, origin, step, d), t, d, loss,
                                     flat_grad, slope)
                loss, flat_grad, t, step_evaluations = found.loss, found.grad, found.t, found.evaluations
                self._move_params(t, d)
                gradient_small = float(flat_grad.abs().max()) <= tolerance_grad
            else:
                self._move_params(t, d)
                if n_iter != max_iter:  # the last iteration's loss is the next step's first evaluation
                    with rt.enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    gradient_small = float(flat_grad.abs().max()) <= tolerance_grad
                    step_evaluations = 1
            evaluations += step_evaluations
            state["func_evals"] += step_evaluations
            if n_iter == max_iter or evaluations >= max_eval or gradient_small:
                break
            if float(d.mul(t).abs().max()) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro, "H_diag": h_diag,
                      "prev_flat_grad": prev_flat_grad, "prev_loss": prev_loss})

    @staticmethod
    def _two_loop_direction(state, flat_grad, old_dirs, old_stps, ro, h_diag, history_size):
        """-H g for the inverse-Hessian approximation H the stored (s, y) pairs define."""
        alphas = state.setdefault("al", [None] * history_size)
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            alphas[i] = _dot(old_stps[i], q) * ro[i]
            q.add_(old_dirs[i], alpha=-alphas[i])
        r = q.mul(h_diag)
        for i in range(len(old_dirs)):
            beta = _dot(old_dirs[i], r) * ro[i]
            r.add_(old_stps[i], alpha=alphas[i] - beta)
        return r
