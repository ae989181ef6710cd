"""Every rt.nn layer class; see module.py for the Module contract."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .embedding import Embedding
from .flatten import Flatten, Unflatten
from .hooks import RemovableHandle
from .linear import Identity, Linear, NonDynamicallyQuantizableLinear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d",
    "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "LeakyReLU",
    "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "MultiheadAttention",
    "NLLLoss", "NonDynamicallyQuantizableLinear", "ReLU", "RemovableHandle", "Sequential", "SiLU", "Sigmoid",
    "Softmax", "Softplus", "Tanh", "TransformerEncoder", "TransformerEncoderLayer", "Unflatten",
]
