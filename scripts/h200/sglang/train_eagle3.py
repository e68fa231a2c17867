"""Train a small EAGLE-3 draft head for a Llama-architecture target (SmolLM2-135M-Instruct here) and save it in
SGLang's ``LlamaForCausalLMEagle3`` layout, so ``--speculative-algorithm EAGLE3 --speculative-draft-model-path``
serves it.

Written for benchbook from the EAGLE-3 paper (arXiv 2503.01840: training-time test, features from three target
layers) and the layouts that SGLang 0.5.17 loads (``sglang/srt/models/llama_eagle3.py``: ``fc`` over 3 x hidden,
one decoder layer whose q/k/v read ``[input_layernorm(embed), hidden_norm(h)]``, the pre-norm residual handed to
the next draft step) and captures (``llama.py`` ``set_eagle3_layers_to_capture``: the residual stream entering
layers 2, L/2 and L-3). The training-time-test attention follows SpecForge's description (step k attends
causally to step 0's keys plus its own earlier steps' keys at the same position, rotary positions shifted by k).

Data: the target model's own responses to benchbook's prompt sets, generated here with temperature 0 and with
sampling, rendered the two ways benchbook sends them (the chat template, as SGLang's chat route applies it,
and the plain ``User:/Assistant:`` text of the native ``/generate`` route). Generation does not stop at EOS,
as the benchmark's ``ignore_eos`` runs do not. Everything the head depends on is hashed into ``train.json``.

    python3 train_eagle3.py --target DIR --out DIR [--seconds 180] [--samples 8] [--max-new-tokens 256]

On a CPU (tests of this script) pass tiny values: ``--samples 1 --max-new-tokens 8 --steps 2 --prompts 2``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.runner.prompts import load_prompt_set  # noqa: E402

PROMPT_SETS = ("coding-agentic", "encyclopedic")


# ---------------------------------------------------------------------------------------------------------------------
# The draft head (parameter names are SGLang's checkpoint names)


class RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Rope:
    def __init__(self, head_dim: int, theta: float, max_pos: int, device: torch.device) -> None:
        inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
        t = torch.arange(max_pos, device=device).float()
        freqs = torch.outer(t, inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()

    def apply(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        n = x.shape[-2]
        cos = self.cos[offset : offset + n].to(x.dtype)
        sin = self.sin[offset : offset + n].to(x.dtype)
        return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, hidden: int, nh: int, nkv: int, hd: int) -> None:
        super().__init__()
        self.nh, self.nkv, self.hd = nh, nkv, hd
        self.q_proj = nn.Linear(2 * hidden, nh * hd, bias=False)
        self.k_proj = nn.Linear(2 * hidden, nkv * hd, bias=False)
        self.v_proj = nn.Linear(2 * hidden, nkv * hd, bias=False)
        self.o_proj = nn.Linear(nh * hd, hidden, bias=False)

    def forward(self, x: torch.Tensor, rope: Rope, step: int, cache: list[list[torch.Tensor]]) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        q, k = rope.apply(q, step), rope.apply(k, step)
        rep = self.nh // self.nkv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        cache[0].append(k)
        cache[1].append(v)
        if step == 0:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scale = 1.0 / math.sqrt(self.hd)
            k0, v0 = cache[0][0], cache[1][0]
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            s0 = (q @ k0.transpose(-1, -2)) * scale
            s0 = s0.masked_fill(~causal, float("-inf"))
            diag = [(q * kj).sum(-1, keepdim=True) * scale for kj in cache[0][1:]]
            w = torch.softmax(torch.cat([s0, *diag], dim=-1).float(), dim=-1).to(q.dtype)
            out = w[..., :t] @ v0
            for j, vj in enumerate(cache[1][1:]):
                out = out + w[..., t + j : t + j + 1] * vj
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.nh * self.hd))


class MLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MidLayer(nn.Module):
    def __init__(self, cfg: dict[str, Any]) -> None:
        super().__init__()
        h, eps = cfg["hidden_size"], cfg["rms_norm_eps"]
        self.self_attn = Attention(h, cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"])
        self.mlp = MLP(h, cfg["intermediate_size"])
        self.input_layernorm = RMSNorm(h, eps)
        self.hidden_norm = RMSNorm(h, eps)
        self.post_attention_layernorm = RMSNorm(h, eps)

    def forward(self, emb: torch.Tensor, hid: torch.Tensor, rope: Rope, step: int, cache: Any) -> torch.Tensor:
        residual = hid
        x = torch.cat([self.input_layernorm(emb), self.hidden_norm(hid)], dim=-1)
        residual = residual + self.self_attn(x, rope, step, cache)
        return residual + self.mlp(self.post_attention_layernorm(residual))


class Eagle3Draft(nn.Module):
    def __init__(self, cfg: dict[str, Any], embed: torch.Tensor, lm_head: torch.Tensor, train_head: bool) -> None:
        super().__init__()
        h = cfg["hidden_size"]
        self.embed_tokens = nn.Embedding.from_pretrained(embed.clone(), freeze=True)
        self.fc = nn.Linear(3 * h, h, bias=False)
        self.midlayer = MidLayer(cfg)
        self.norm = RMSNorm(h, cfg["rms_norm_eps"])
        self.lm_head = nn.Linear(h, lm_head.shape[0], bias=False)
        with torch.no_grad():
            self.lm_head.weight.copy_(lm_head)
        self.lm_head.weight.requires_grad_(train_head)
        for name, p in self.named_parameters():
            if p.dim() == 2 and name not in ("embed_tokens.weight", "lm_head.weight"):
                nn.init.normal_(p, std=0.02)

    def state_for_sglang(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().to(torch.bfloat16).contiguous().cpu() for k, v in self.state_dict().items()}

    def trained_state(self) -> dict[str, torch.Tensor]:
        """Only what training changed (small enough to bring back from the GPU machine): ``assemble`` rebuilds
        the full head from it and the target's embeddings."""
        names = {n for n, p in self.named_parameters() if p.requires_grad}
        return {k: v for k, v in self.state_for_sglang().items() if k in names}


def head_config(cfg: dict[str, Any], layers: list[int], rope_theta: float) -> dict[str, Any]:
    out = dict(cfg)
    out.pop("_name_or_path", None)
    out.update(
        architectures=["LlamaForCausalLMEagle3"],
        num_hidden_layers=1,
        tie_word_embeddings=False,
        draft_vocab_size=cfg["vocab_size"],
        target_hidden_size=cfg["hidden_size"],
        rope_theta=rope_theta,
        eagle_config={"eagle_aux_hidden_state_layer_ids": [i - 1 for i in layers]},
    )
    return out


def assemble(target_dir: Path, trained: Path, out_dir: Path) -> str:
    """Rebuild the servable head from ``trained.safetensors`` and the target's embeddings (and head, if it was not
    trained); returns the head's sha256, which equals the one written at training time."""
    from safetensors.torch import load_file, save_file

    cfg = json.loads((target_dir / "config.json").read_text())
    target = load_file(str(target_dir / "model.safetensors"))
    state = load_file(str(trained))
    embed = target["model.embed_tokens.weight"].to(torch.bfloat16)
    head = target.get("lm_head.weight", embed).to(torch.bfloat16)
    full = {"embed_tokens.weight": embed.clone(), **state}
    full.setdefault("lm_head.weight", head.clone())
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = json.loads((trained.parent / "train.json").read_text())
    cfg.setdefault("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    theta = cfg.get("rope_theta") or cfg.get("rope_parameters", {}).get("rope_theta", 10000.0)
    (out_dir / "config.json").write_text(json.dumps(head_config(cfg, meta["aux_layer_inputs"], float(theta)), indent=1))
    save_file(dict(sorted(full.items())), str(out_dir / "model.safetensors"))
    (out_dir / "train.json").write_text(json.dumps(meta, indent=1))
    return sha256_file(out_dir / "model.safetensors")


def aux_layer_inputs(num_layers: int) -> list[int]:
    """The layers whose *input* residual stream SGLang captures for EAGLE-3 (its default)."""
    return [2, num_layers // 2, num_layers - 3]


# ---------------------------------------------------------------------------------------------------------------------
# Data


def render(tokenizer: Any, prompt: Any, style: str) -> list[int]:
    if style == "chat":
        text = tokenizer.apply_chat_template(prompt.chat(), add_generation_prompt=True, tokenize=False)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(tokenizer(prompt.text, add_special_tokens=True)["input_ids"])


@torch.no_grad()
def generate(
    model: Any,
    prompts: list[list[int]],
    *,
    max_new: int,
    temperature: float,
    seed: int,
    batch: int,
    device: torch.device,
    pad_id: int,
) -> list[list[int]]:
    """Responses that run to ``max_new`` tokens without stopping at EOS (as ``ignore_eos`` runs do)."""
    out: list[list[int]] = []
    torch.manual_seed(seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    results: dict[int, list[int]] = {}
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        width = max(len(prompts[i]) for i in idx)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):  # left padding for generation
            ids[r, width - len(prompts[i]) :] = torch.tensor(prompts[i])
            mask[r, width - len(prompts[i]) :] = 1
        kwargs: dict[str, Any] = {"do_sample": temperature > 0, "max_new_tokens": max_new, "min_new_tokens": max_new}
        if temperature > 0:
            kwargs.update(temperature=temperature, top_p=1.0, top_k=0)
        gen = model.generate(
            input_ids=ids.to(device), attention_mask=mask.to(device), eos_token_id=None, pad_token_id=pad_id, **kwargs
        )
        for r, i in enumerate(idx):
            results[i] = gen[r, width:].tolist()
    for i in range(len(prompts)):
        out.append(results[i])
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------------------------------
# Training


def train(args: argparse.Namespace) -> dict[str, Any]:
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t_start = time.time()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    target_dir, out_dir = Path(args.target), Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(target_dir)
    model = AutoModelForCausalLM.from_pretrained(target_dir, dtype=dtype).to(device).eval()
    cfg = json.loads((target_dir / "config.json").read_text())
    cfg.setdefault("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    layers = aux_layer_inputs(cfg["num_hidden_layers"])

    # 1. the target's own responses
    sets = [load_prompt_set(name) for name in PROMPT_SETS]
    prompts = [(s.name, p) for s in sets for p in s.prompts][: args.prompts or None]
    rendered = [(name, style, render(tok, p, style)) for name, p in prompts for style in ("chat", "generate")]
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    seqs: list[tuple[list[int], int]] = []  # (tokens, prompt length)
    temps = [0.0] + [args.temperature] * (args.samples - 1)
    for k, temp in enumerate(temps):
        outs = generate(
            model,
            [r[2] for r in rendered],
            max_new=args.max_new_tokens,
            temperature=temp,
            seed=args.seed + k,
            batch=args.gen_batch,
            device=device,
            pad_id=pad_id,
        )
        seqs += [(r[2] + o, len(r[2])) for r, o in zip(rendered, outs, strict=True)]
    t_data = time.time()
    print(f"data: {len(seqs)} sequences, {sum(len(s) for s, _ in seqs)} tokens in {t_data - t_start:.1f} s", flush=True)

    # 2. the head
    embed = model.get_input_embeddings().weight.detach().float()
    head = model.get_output_embeddings().weight.detach().float()
    draft = Eagle3Draft(cfg, embed, head, args.train_head).to(device)
    rope_theta = cfg.get("rope_theta") or cfg.get("rope_parameters", {}).get("rope_theta", 10000.0)
    rope = Rope(cfg["head_dim"], float(rope_theta), max(len(s) for s, _ in seqs) + args.ttt + 8, device)
    params = [p for p in draft.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    steps_done, losses, accs = 0, [], []
    deadline = time.time() + args.seconds
    while steps_done < (args.steps or 1 << 60) and time.time() < deadline:
        lr = args.lr * min(1.0, (steps_done + 1) / args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        batch = random.sample(seqs, min(args.batch, len(seqs)))
        width = max(len(s) for s, _ in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        valid = torch.zeros((len(batch), width), dtype=torch.bool)
        for r, (s, plen) in enumerate(batch):  # right padding: causal attention never reads it
            ids[r, : len(s)] = torch.tensor(s)
            valid[r, max(plen - 1, 0) : len(s)] = True  # positions whose next token is a response token
        ids, valid = ids.to(device), valid.to(device)
        with torch.no_grad():
            out = model(input_ids=ids, output_hidden_states=True)
            aux = torch.cat([out.hidden_states[i] for i in layers], dim=-1).to(dtype)
            p_all = torch.softmax(out.logits.float(), dim=-1)  # the target's next-token distribution per position
            del out
        loss_total = torch.zeros((), device=device)
        step_acc = []
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            hid = draft.fc(aux)
            cache: list[list[torch.Tensor]] = [[], []]
            for k in range(args.ttt):
                # position t at step k: input token x[t+k+1], target distribution of x[t+k+2] (p_all at t+k+1)
                shift = k + 1
                n = width - shift
                inp = torch.full_like(ids, pad_id)
                inp[:, :n] = ids[:, shift:]
                hid = draft.midlayer(draft.embed_tokens(inp).to(hid.dtype), hid, rope, k, cache)
                logp = torch.log_softmax(draft.lm_head(draft.norm(hid[:, :n])).float(), dim=-1)
                p = p_all[:, shift:]
                mf = valid[:, shift:].float()
                ce = -(p * logp).sum(-1)
                loss_k = (ce * mf).sum() / mf.sum().clamp_min(1.0)
                loss_total = loss_total + (args.decay**k) * loss_k
                with torch.no_grad():
                    hit = (logp.argmax(-1) == p.argmax(-1)).float()
                    step_acc.append(float((hit * mf).sum() / mf.sum().clamp_min(1.0)))
        opt.zero_grad(set_to_none=True)
        loss_total.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.5)
        opt.step()
        steps_done += 1
        losses.append(float(loss_total.detach()))
        accs.append(step_acc)
        if steps_done % args.log_every == 0 or steps_done == 1:
            print(
                f"step {steps_done} loss {losses[-1]:.4f} top-1 by step "
                + " ".join(f"{a:.2f}" for a in step_acc)
                + f" ({time.time() - t_start:.0f} s)",
                flush=True,
            )
    t_train = time.time()

    # 3. save in SGLang's layout
    (out_dir / "config.json").write_text(json.dumps(head_config(cfg, layers, float(rope_theta)), indent=1))
    save_file(dict(sorted(draft.state_for_sglang().items())), str(out_dir / "model.safetensors"))
    save_file(dict(sorted(draft.trained_state().items())), str(out_dir / "trained.safetensors"))
    tail = accs[-min(len(accs), 20) :]
    report = {
        "target": str(target_dir),
        "target_weights_sha256": sha256_file(target_dir / "model.safetensors"),
        "head_sha256": sha256_file(out_dir / "model.safetensors"),
        "trained_sha256": sha256_file(out_dir / "trained.safetensors"),
        "lm_head_trained": args.train_head,
        "prompt_sets": {s.name: s.content_hash for s in sets},
        "prompts_used": len(prompts),
        "styles": ["chat (tokenizer chat template)", "generate (plain User:/Assistant: text)"],
        "samples_per_prompt_and_style": args.samples,
        "temperatures": temps,
        "max_new_tokens": args.max_new_tokens,
        "sequences": len(seqs),
        "tokens": sum(len(s) for s, _ in seqs),
        "aux_layer_inputs": layers,
        "ttt_steps": args.ttt,
        "step_loss_decay": args.decay,
        "optimizer": f"AdamW lr {args.lr} betas (0.9, 0.95), warm-up {args.warmup} steps, clip 0.5",
        "batch": args.batch,
        "steps": steps_done,
        "final_loss": losses[-1] if losses else None,
        "train_top1_by_step_last_20": [round(sum(a[k] for a in tail) / len(tail), 4) for k in range(args.ttt)]
        if tail
        else [],
        "seconds": {"data": round(t_data - t_start, 1), "train": round(t_train - t_data, 1)},
        "seed": args.seed,
        "versions": {
            "torch": torch.__version__,
            "transformers": __import__("transformers").__version__,
            "python": sys.version.split()[0],
        },
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
        "script_sha256": sha256_file(Path(__file__)),
    }
    (out_dir / "train.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1), flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", required=True, help="the target model folder (safetensors + tokenizer)")
    p.add_argument("--out", required=True, help="where the head is written")
    p.add_argument("--assemble", metavar="TRAINED", help="only rebuild the head from a trained.safetensors")
    p.add_argument("--train-head", action="store_true", help="train lm_head too (default: the target's, frozen)")
    p.add_argument("--seconds", type=float, default=180.0, help="training time budget")
    p.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: only the time budget)")
    p.add_argument("--samples", type=int, default=8, help="responses per prompt and style: 1 greedy + sampled")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--prompts", type=int, default=0, help="use only the first N prompts (0: all)")
    p.add_argument("--gen-batch", type=int, default=256)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--ttt", type=int, default=7, help="training-time-test steps")
    p.add_argument("--decay", type=float, default=0.8, help="loss weight of step k is decay**k")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.assemble:
        print("assembled", args.out, "sha256", assemble(Path(args.target), Path(args.assemble), Path(args.out)))
        return 0
    train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
