"""rt.nn.utils: gradient clipping, flat parameter vectors and packed sequences (rt.nn.utils.rnn)."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn

__all__ = ["rnn", "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
