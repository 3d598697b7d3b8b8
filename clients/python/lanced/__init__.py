"""lanced: a client for the lanced daemon (Lance row lookups over HTTP) returning numpy
arrays, and lanced.torch.LancedDataset for PyTorch."""
from .arrow import Ragged
from .client import Client, LancedError

__all__ = ["Client", "LancedError", "Ragged"]
