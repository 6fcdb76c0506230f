"""Common networks built from sonnet_like modules."""

# pylint: disable=g-bad-import-order
from sonnet_like.nets.mlp import MLP
# --- nature_cnn ---
from sonnet_like.nets.nature_cnn import NatureCNN
# --- cifar10_convnet, resnet ---
from sonnet_like.nets import resnet
from sonnet_like.nets.cifar10_convnet import Cifar10ConvNet
from sonnet_like.nets.resnet import ResNet
from sonnet_like.nets.resnet import ResNet50
# --- transformer ---
from sonnet_like.nets.transformer import Transformer
from sonnet_like.nets.transformer_lm import TransformerLM
# --- vqvae ---
from sonnet_like.nets.vqvae import VectorQuantizer
from sonnet_like.nets.vqvae import VectorQuantizerEMA

__all__ = [
    "MLP",
    # --- nature_cnn ---
    "NatureCNN",
    # --- cifar10_convnet, resnet ---
    "Cifar10ConvNet",
    "resnet",
    "ResNet",
    "ResNet50",
    # --- transformer ---
    "Transformer",
    "TransformerLM",
    # --- vqvae ---
    "VectorQuantizer",
    "VectorQuantizerEMA",
]
