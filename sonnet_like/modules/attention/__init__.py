"""Attention: multi-head attention, rotary positions, a key/value cache."""

from sonnet_like.modules.attention.cache import KVCache
from sonnet_like.modules.attention.functional import attention
from sonnet_like.modules.attention.functional import chunked_attention
from sonnet_like.modules.attention.multi_head import MultiHeadAttention
from sonnet_like.modules.attention.rotary import RotaryEmbedding

__all__ = [
    "KVCache",
    "MultiHeadAttention",
    "RotaryEmbedding",
    "attention",
    "chunked_attention",
]
