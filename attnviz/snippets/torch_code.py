"""The PyTorch snippet: ``nn.Module`` classes, as the chapter's PyTorch tab builds attention.

A masked softmax over valid lengths (the -1e6 fill by broadcasting a key index against the
lengths), the scoring function as a module with ``nn.Linear`` parameters where it learns any,
``torch.bmm`` for the batched products, ``nn.Dropout`` on the weights. Every operation is the one
attnviz's engine performs, in the same order (the Gaussian kernel's distances with ``baddbmm``, as
the engine computes them), so the weights agree to the last bits.
"""

from __future__ import annotations

from typing import ClassVar

from .modules import ModuleGenerator, ModuleStyle
from .ops import Ops

__all__ = ["TorchGenerator"]


class TorchGenerator(ModuleGenerator):
    framework: ClassVar[str] = "pytorch"
    title: ClassVar[str] = "PyTorch"
    needs: ClassVar[str] = "torch and numpy"
    import_lines: ClassVar[tuple[str, ...]] = ("import numpy as np", "import torch", "from torch import nn")
    ops = Ops(
        lib="torch",
        softmax="torch.softmax({x}, dim=-1)",
        key_index="torch.arange(X.shape[-1], device=X.device)",
        bmm_t="torch.bmm({a}, {pb}.transpose(1, 2))",
        half_to_numpy="{px}.float().numpy()",
        is_1d="valid_lens.dim() == 1",
        any_row="{pm}.any(dim=-1, keepdim=True)",
        as_dtype="{pm}.to({like}.dtype)",
        ones_like="torch.ones_like({x}, dtype=torch.bool)",
        bmm="torch.bmm({a}, {b})",
        expand="{px}.unsqueeze({axis})",
        squeeze_last="{px}.squeeze(-1)",
        sum_last="{px}.sum(-1)",
        sum_last_keep="{px}.sum(-1, keepdim=True)",
        clamp0="{px}.clamp(min=0)",
        # The engine's own fused product, so that the distances agree to the last bits
        minus_2_bmm_t="torch.baddbmm({c}, {a}, {pb}.transpose(1, 2), alpha=-2.0)",
        array="torch.tensor({src}, dtype={dtype})",
        bool_array="torch.tensor({src}) != 0",
        int_dtype="int64",
    )
    style: ClassVar[ModuleStyle] = ModuleStyle(
        base="nn.Module",
        super_init="super().__init__()",
        forward="forward",
        linear="nn.Linear({n_in}, {n_out}, bias=False)",
        linear_comment="# Linear maps without bias; a weight is stored (out_features, in_features)",
        param="nn.Parameter(torch.empty{shape})",
        dropout="nn.Dropout({p})",
        dropout_base="nn.Module",
        dropout_super_init="super().__init__()",
        rate="p",
        build=("attention = {ctor}.to(dtype)",),
        train="attention.train()",
        eval="attention.eval()  # dropout acts in training only; attnviz shows the weights in eval mode",
        context="with torch.no_grad():",
    )

    def load_params(self) -> None:
        w = self.w
        w.line("# The learnable parameters attnviz used, in nn.Linear's (out_features, in_features) layout")
        # The linear layers hold theirs as .weight; the bilinear matrix is a parameter itself.
        items = ", ".join(f'"{name if name == "W" else name + ".weight"}": {name}' for name in self.inp.params)
        w.line(f"attention.load_state_dict({{{items}}})")
