"""parameters_to_vector / vector_to_parameters, as in torch.nn.utils.

    flat = rt.nn.utils.parameters_to_vector(model.parameters())       # 1-D, all parameters in order
    rt.nn.utils.vector_to_parameters(flat * 0.5, model.parameters())   # writes the slices back
"""
import rustytorch as rt


def parameters_to_vector(parameters):
    return rt.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, rt.Tensor):
        raise TypeError(f"expected vec to be a rustytorch Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if tuple(vec.shape) != (total,):
        raise ValueError(f"vector_to_parameters: vec has shape {list(vec.shape)} but the parameters hold "
                         f"{total} elements; pass a 1-D vector of exactly that length")
    offset = 0
    with rt.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view(tuple(p.shape)))
            offset += n
