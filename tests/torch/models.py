"""models.py: decoders the PyTorch front-end tests trace, written here so the
tests need no download: a GPT-style one (learned positions, LayerNorm,
fused qkv with biases, GELU MLP, tied embeddings) and a Llama-style one
(RMSNorm, rotary positions, grouped-query attention, SiLU-gated MLP, tied
or untied embeddings, an optional KV cache written in place).
Factories at the bottom return (model, example_inputs) for
`python3 -m hoffopt_torch tests/torch/models.py:NAME`.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, ctx):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx))
                             .view(1, 1, ctx, ctx), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, s, d)
        return self.proj(y)


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, ctx):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, ctx)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=256, dim=64, heads=4, layers=2, ctx=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(ctx, dim)
        self.h = nn.ModuleList(GPTBlock(dim, heads, ctx)
                               for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * r * self.weight


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads, cache=None):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.hd = dim // heads
        self.q_proj = nn.Linear(dim, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, dim, bias=False)
        if cache is not None:  # (batch, max_seq): written in place
            shape = (cache[0], kv_heads, cache[1], self.hd)
            self.register_buffer("k_cache", torch.zeros(shape))
            self.register_buffer("v_cache", torch.zeros(shape))
        else:
            self.k_cache = self.v_cache = None

    def repeat_kv(self, x):
        """Each KV head serves heads / kv_heads query heads (as HF's
        repeat_kv: a broadcast, then a copy by reshape)."""
        b, h, s, d = x.shape
        rep = self.heads // h
        return x[:, :, None].expand(b, h, rep, s, d).reshape(b, h * rep, s, d)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if self.k_cache is not None:
            self.k_cache[:b, :, :s].copy_(k)
            self.v_cache[:b, :, :s].copy_(v)
            k, v = self.k_cache[:b, :, :s], self.v_cache[:b, :, :s]
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        mask = torch.full((s, s), float("-inf"), device=x.device).triu(1)
        att = F.softmax(att + mask, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, self.heads * self.hd)
        return self.o_proj(y)


class LlamaMLP(nn.Module):
    def __init__(self, dim, ffn):
        super().__init__()
        self.gate_proj = nn.Linear(dim, ffn, bias=False)
        self.up_proj = nn.Linear(dim, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads, kv_heads, ffn, cache):
        super().__init__()
        self.input_layernorm = RMSNorm(dim)
        self.self_attn = LlamaAttention(dim, heads, kv_heads, cache)
        self.post_attention_layernorm = RMSNorm(dim)
        self.mlp = LlamaMLP(dim, ffn)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """tie: share the embedding with the head. last_only: logits of the
    last position only (as generation's prefill does). cache: (batch,
    max_seq) to keep a KV cache a layer, written in place."""

    def __init__(self, vocab=256, dim=64, heads=4, kv_heads=2, ffn=176,
                 layers=2, tie=True, last_only=False, cache=None,
                 theta=500000.0):
        super().__init__()
        self.hd = dim // heads
        self.theta = theta
        self.last_only = last_only
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, ffn,
                                               cache)
                                    for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        if tie:
            self.lm_head.weight = self.embed_tokens.weight

    def forward(self, idx):
        s = idx.shape[1]
        inv = 1.0 / (self.theta ** (torch.arange(0, self.hd, 2,
                                                 device=idx.device)
                                    .float() / self.hd))
        t = torch.arange(s, device=idx.device).float()
        f = torch.outer(t, inv)
        emb = torch.cat((f, f), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed_tokens(idx)
        for layer in self.layers:
            x = layer(x, cos, sin)
        if self.last_only:
            x = x[:, -1:]
        return self.lm_head(self.norm(x))


def next_token_loss(logits):
    """Cross-entropy against labels made inside (token 0 everywhere): the
    loss a decoder trains on, with no data captured from outside."""
    v = logits.shape[-1]
    labels = torch.zeros(logits.shape[:-1], dtype=torch.long,
                         device=logits.device)
    return F.cross_entropy(logits.reshape(-1, v), labels.reshape(-1))


# ---- factories: zero-argument, return (model, example_inputs) ------------

def tokens(batch, seq, vocab):
    return torch.zeros(batch, seq, dtype=torch.long)


def gpt_small():
    return GPT(), (tokens(2, 32, 256),)


def llama_small():
    return Llama(), (tokens(2, 32, 256),)


LLAMA3_8B = dict(vocab=128256, dim=4096, heads=32, kv_heads=8, ffn=14336,
                 layers=32, tie=False)


def llama3_8b(seq=4096, batch=1, **kw):
    """Llama-3-8B's shape (meta-llama/Meta-Llama-3-8B config.json), for
    the 7B-class trace and the comparison with `hoffopt gen llama3-8b`."""
    cfg = dict(LLAMA3_8B)
    cfg.update(kw)
    return Llama(**cfg), (tokens(batch, seq, cfg["vocab"]),)


def llama3_8b_train():
    return llama3_8b()


def llama3_8b_prefill():
    return llama3_8b(last_only=True, cache=(1, 4096))
