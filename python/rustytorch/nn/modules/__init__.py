"""Every rt.nn layer class; see module.py for the Module contract."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .embedding import Embedding
from .flatten import Flatten, Unflatten
from .hooks import RemovableHandle
from .linear import Identity, Linear, NonDynamicallyQuantizableLinear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss,
                   MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv1d",
    "Conv2d", "CosineEmbeddingLoss", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "GRU", "GRUCell",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LSTM", "LSTMCell",
    "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MarginRankingLoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiheadAttention", "NLLLoss",
    "NonDynamicallyQuantizableLinear", "PoissonNLLLoss", "RNN", "RNNBase", "RNNCell", "RNNCellBase", "ReLU",
    "RemovableHandle", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "SoftMarginLoss", "Softmax", "Softplus",
    "Tanh", "TransformerEncoder", "TransformerEncoderLayer", "TripletMarginLoss", "Unflatten",
]
