"""rt.nn.utils: gradient clipping, flat parameter vectors, packed sequences (rt.nn.utils.rnn), parametrizations
(rt.nn.utils.parametrize, rt.nn.utils.parametrizations) and the hook-based weight_norm / spectral_norm."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
from . import parametrizations, parametrize, rnn

__all__ = ["rnn", "parametrize", "parametrizations", "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
