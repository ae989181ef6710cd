"""einsum written over engine ops: diagonals for repeated subscripts, sums over the subscripts nothing needs
any more, and one batched matmul per pair of operands (contracted left to right).

Autograd derives the backward from those ops. The equation is parsed as torch parses it: explicit ("ij,jk->ik")
and implicit ("ij,jk") output, one ellipsis per term, repeated subscripts for diagonals and traces, and torch's
sublist form einsum(op0, [0, 1], op1, [1, 2], [0, 2])."""
from collections.abc import Sequence

from . import _C
from ._shape_ops import diagonal

__all__ = ["einsum"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ELLIPSIS = "..."


# [SECTION] parsing

def _parse_term(term, start, where):
    """The subscripts of one term as a list of letters and at most one "..."; start is the term's index in the
    equation, for the error messages."""
    labels, i = [], 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != _ELLIPSIS:
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            if _ELLIPSIS in labels:
                raise RuntimeError(f"einsum(): found more than one ellipsis ('...') for {where}")
            labels.append(_ELLIPSIS)
            i += 3
            continue
        if ch not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(ch)
        i += 1
    return labels


def _parse(equation, n_operands):
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms, pos = [], 0
    for k, term in enumerate(lhs.split(",")):
        terms.append(_parse_term(term, pos, f"operand {k}"))
        pos += len(term) + 1
    if len(terms) > n_operands:
        raise ValueError(f"einsum(): fewer operands were provided than specified in the equation ({n_operands} "
                         f"given, {len(terms)} specified)")
    if len(terms) < n_operands:
        raise ValueError(f"einsum(): more operands were provided than specified in the equation ({n_operands} "
                         f"given, {len(terms)} specified)")
    output = _parse_term(rhs, len(lhs) + 2, "the output") if arrow else None
    return terms, output


def _sublist_equation(args):
    """torch's sublist form: (op0, sub0, op1, sub1, ..., [out]) with subscripts as ints in [0, 52) or Ellipsis."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append(_ELLIPSIS)
            elif isinstance(s, int) and 0 <= s < len(_LETTERS):
                out.append(_LETTERS[s])
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52): {s}")
        return "".join(out)
    operands = list(args[0::2])
    terms = [letters(sub) for sub in args[1::2]]
    output = None
    if len(operands) > len(terms):  # an odd count: the last item is the output sublist
        output = letters(operands.pop())
    equation = ",".join(terms) + ("" if output is None else "->" + output)
    return equation, operands


# [SECTION] per-operand preparation

def _expand_ellipsis(labels, op, k, n_ellipsis):
    """The operand's labels with "..." replaced by one label per dim it covers, right-aligned across operands
    ("...0" is the ellipsis dim furthest from the end of the broadcast ellipsis shape)."""
    letters = [lab for lab in labels if lab != _ELLIPSIS]
    if _ELLIPSIS not in labels:
        if len(letters) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not match "
                               f"the number of dimensions ({op.dim()}) for operand {k} and no ellipsis was given")
        return letters
    covered = op.dim() - len(letters)
    if covered < 0:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) is more than the "
                           f"number of dimensions ({op.dim()}) for operand {k}")
    at = labels.index(_ELLIPSIS)
    dots = [f"...{n_ellipsis - covered + j}" for j in range(covered)]
    return labels[:at] + dots + labels[at + 1:]


def _take_diagonals(op, labels, k):
    """Collapses each subscript repeated within the operand to its diagonal (placed last by diagonal())."""
    labels = list(labels)
    while True:
        repeated = next((lab for lab in labels if labels.count(lab) > 1), None)
        if repeated is None:
            return op, labels
        i = labels.index(repeated)
        j = labels.index(repeated, i + 1)
        if op.shape[i] != op.shape[j]:
            raise RuntimeError(f"einsum(): subscript {repeated} is repeated for operand {k} but the sizes don't "
                               f"match, {op.shape[i]} != {op.shape[j]}")
        op = diagonal(op, 0, i, j)
        labels = [lab for n, lab in enumerate(labels) if n not in (i, j)] + [repeated]


def _sum_labels(op, labels, drop):
    dims = [d for d, lab in enumerate(labels) if lab in drop]
    if not dims:
        return op, labels
    return op.sum(dims), [lab for lab in labels if lab not in drop]


# [SECTION] contraction

def _size(op, labels, lab):
    return op.shape[labels.index(lab)] if lab in labels else 1


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _contract_pair(a, la, b, lb, keep):
    """a (labels la) times b (labels lb), summed over the labels both have that keep does not hold.

    Labels of one operand only are summed first when nothing keeps them. A shared label of size 1 on one side
    broadcasts: kept, it is expanded; contracted, the other side is summed over it alone (a constant factor)."""
    a, la = _sum_labels(a, la, {x for x in la if x not in lb and x not in keep})
    b, lb = _sum_labels(b, lb, {x for x in lb if x not in la and x not in keep})
    shared = [x for x in la if x in lb]
    for x in shared:
        sa, sb = _size(a, la, x), _size(b, lb, x)
        if sa != sb and 1 not in (sa, sb):
            raise RuntimeError(f"einsum(): operands do not broadcast: subscript {_shown(x)} has size {sa} in one "
                               f"operand and {sb} in the other")
        if x not in keep and sa != sb:
            if sa == 1:
                a, la = a.squeeze(la.index(x)), [y for y in la if y != x]
                b, lb = _sum_labels(b, lb, {x})
            else:
                b, lb = b.squeeze(lb.index(x)), [y for y in lb if y != x]
                a, la = _sum_labels(a, la, {x})
    batch = [x for x in la if x in lb and x in keep]
    inner = [x for x in la if x in lb and x not in keep]
    free_a = [x for x in la if x not in lb]
    free_b = [x for x in lb if x not in la]
    batch_sizes = [max(_size(a, la, x), _size(b, lb, x)) for x in batch]
    a = a.permute(*(la.index(x) for x in batch + free_a + inner))
    b = b.permute(*(lb.index(x) for x in batch + inner + free_b))
    a = a.expand(*batch_sizes, *a.shape[len(batch):])
    b = b.expand(*batch_sizes, *b.shape[len(batch):])
    fa = [a.shape[len(batch) + i] for i in range(len(free_a))]
    fb = [b.shape[len(batch) + len(inner) + i] for i in range(len(free_b))]
    n_inner = _prod(a.shape[len(batch) + len(free_a):])
    nb = _prod(batch_sizes)
    out = _C.matmul(a.reshape(nb, _prod(fa), n_inner), b.reshape(nb, n_inner, _prod(fb)))
    return out.reshape(*batch_sizes, *fa, *fb), batch + free_a + free_b


def _shown(label):
    return _ELLIPSIS if label.startswith(_ELLIPSIS) else label


def _output_labels(terms, output, n_ellipsis):
    dots = [f"...{j}" for j in range(n_ellipsis)]
    if output is None:
        letters = [lab for term in terms for lab in term if lab != _ELLIPSIS]
        singles = sorted((x for x in set(letters) if letters.count(x) == 1), key=_LETTERS.index)
        return dots + singles
    seen, labels = set(terms[0]).union(*terms[1:]), []
    for lab in output:
        if lab in labels:
            raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in the output")
        if lab != _ELLIPSIS and lab not in seen:
            raise RuntimeError(f"einsum(): output subscript {lab} does not appear in the equation for any input "
                               "operand")
        labels.append(lab)
    if _ELLIPSIS in labels:
        at = labels.index(_ELLIPSIS)
        labels = labels[:at] + dots + labels[at + 1:]
    return labels


def einsum(*args):
    """Sums the product of the operands' elements over the subscripts the output leaves out.

    einsum("ij,jk->ik", a, b) is a @ b; "ii" is a trace, "ii->i" a diagonal, "bij,bjk->bik" a batched matmul,
    "...ij->...ji" a transpose of the last two dims; operands may also come as one list. Without "->" the
    output holds the ellipsis dims, then the subscripts used once, in alphabetical order (upper case first).
    Operands are contracted left to right (torch may choose another order; the result is the same up to
    rounding). Like torch's, the result may be a view of an operand (einsum("ij->ji", x) is x.permute(1, 0))."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], Sequence):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    for k, op in enumerate(operands):
        if not isinstance(op, _C.Tensor):
            raise TypeError(f"einsum(): operand {k} is a {type(op).__name__}, expected a Tensor")
    terms, output = _parse(equation, len(operands))
    n_ellipsis = max((op.dim() - len(t) + 1 for op, t in zip(operands, terms) if _ELLIPSIS in t), default=0)
    expanded = [_expand_ellipsis(t, op, k, n_ellipsis) for k, (t, op) in enumerate(zip(terms, operands))]
    out_labels = _output_labels(terms, output, n_ellipsis)
    prepared = [_take_diagonals(op, labels, k) for k, (op, labels) in enumerate(zip(operands, expanded))]
    result, labels = prepared[0]
    for i in range(1, len(prepared)):
        keep = set(out_labels).union(*(lab for _, lab in prepared[i + 1:]))
        b, lb = prepared[i]
        result, labels = _contract_pair(result, labels, b, lb, keep)
    result, labels = _sum_labels(result, labels, {x for x in labels if x not in out_labels})
    if result is operands[0]:  # nothing to compute (a permutation at most): a view, as torch returns
        return result.permute(*(labels.index(x) for x in out_labels)) if labels else result.view(())
    return result.permute(*(labels.index(x) for x in out_labels)) if labels else result
