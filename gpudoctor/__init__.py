"""gpudoctor: a doctor for the NVIDIA deep-learning stack (driver, CUDA, cuDNN, PyTorch)."""

__version__ = "0.1.0"
