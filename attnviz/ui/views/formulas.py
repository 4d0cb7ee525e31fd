"""The chapter's equations as Qt rich text (HTML for a QLabel), with one part highlighted.

Qt's rich-text engine has no maths layout, but it has nested tables with per-cell borders, and
that is enough for the two constructs the chapter needs besides sub- and superscripts: a
fraction (a two-row table whose top cell has a bottom border as the fraction bar) and a sum
with its limits above and below (a three-row table). Because a table is a block in Qt's layout,
an equation is one table row whose cells are laid out side by side and vertically centred.

Each part of an equation is tagged with the pipeline stage (``attnviz.engine.STAGES``, plus
``"hidden"`` for the additive features) that computes it. Passing ``highlight=<stage>`` paints
that part, so hovering a stage's heatmap shows where it lives in the maths.

Plain strings only: no widget is created here, so the tests can check the HTML directly. Nor is
the engine imported: it imports torch, which the app loads on the compute thread only, so the
window appears while PyTorch is still loading; names, labels and LaTeX come from
``attnviz.state.catalog``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from attnviz.state import catalog
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.i18n import tr_text, translate

__all__ = [
    "HIGHLIGHT_BG",
    "FORMULA_STAGES",
    "SCORING_FORMULAS",
    "latex_to_html",
    "missing_formulas",
    "scoring_formula",
    "softmax_formula",
    "pooling_formula",
    "matrix_formula",
    "pipeline_formulas",
]

#: Background of the highlighted part (a warm yellow that keeps black text readable).
HIGHLIGHT_BG = "#ffd866"
_HIGHLIGHT_FG = "#000000"
#: Stages a formula part can be tagged with: the engine's stages plus the additive features.
FORMULA_STAGES: tuple[str, ...] = (
    "raw_scores",
    "scores",
    "mask",
    "masked_scores",
    "weights",
    "applied_weights",
    "output",
    "hidden",
)


@dataclass(frozen=True)
class _Math:
    """Small HTML builders sharing the highlighted stage and the ink colour."""

    highlight: str | None = None
    ink: str = "#202020"

    # -------------------------------------------------------------- inline pieces

    @property
    def muted(self) -> str:
        """The ink at about two thirds opacity, for notes: secondary on light and dark themes."""
        ink = self.ink.lstrip("#")
        if len(ink) != 6:
            return self.ink
        r, g, b = (int(ink[i : i + 2], 16) for i in (0, 2, 4))
        return f"rgba({r},{g},{b},165)"

    def on(self, stage: str | tuple[str, ...]) -> bool:
        stages = (stage,) if isinstance(stage, str) else stage
        if "scores" in stages:  # the score terms' stage is drawn on the scores they modify
            stages = (*stages, "modified_scores")
        return self.highlight is not None and self.highlight in stages

    def hl(self, html: str, stage: str | tuple[str, ...]) -> str:
        """Paint ``html`` when its stage is the highlighted one (inline only, not tables)."""
        if not self.on(stage):
            return html
        return f'<span style="background-color:{HIGHLIGHT_BG}; color:{_HIGHLIGHT_FG};">{html}</span>'

    @staticmethod
    def var(name: str) -> str:
        """An italic scalar variable (a, d, m, i)."""
        return f"<i>{name}</i>"

    @staticmethod
    def vec(name: str, index: str = "") -> str:
        """A bold upright vector or matrix, with an optional italic subscript (k_i, W_q)."""
        sub = f"<sub>{index}</sub>" if index else ""
        return f"<b>{name}</b>{sub}"

    @staticmethod
    def sup(base: str, exponent: str) -> str:
        return f"{base}<sup>{exponent}</sup>"

    @staticmethod
    def op(name: str) -> str:
        """An upright operator name (exp, tanh, softmax, dropout)."""
        return f"<span style='font-style:normal;'>{name}</span>"

    def sqrt(self, radicand: str) -> str:
        # The radical sign followed by an overlined radicand: the bar of a real root.
        return f"√<span style='text-decoration:overline;'>&#8202;{radicand}&#8202;</span>"

    def transpose(self, html: str) -> str:
        return f"{html}<sup>⊤</sup>"

    # -------------------------------------------------------------- blocks (tables)

    def row(self, *cells: str, bg: bool = False) -> str:
        """Cells side by side, vertically centred: the skeleton of every displayed equation."""
        colour = f' bgcolor="{HIGHLIGHT_BG}"' if bg else ""
        tds = "".join(f'<td valign="middle"{colour}>{c}</td>' for c in cells)
        return f'<table cellspacing="0" cellpadding="0"><tr>{tds}</tr></table>'

    def frac(self, num: str, den: str, bg: bool = False) -> str:
        """A fraction: the top cell's bottom border is the fraction bar."""
        colour = f' bgcolor="{HIGHLIGHT_BG}"' if bg else ""
        return (
            '<table cellspacing="0" cellpadding="0" style="border-collapse:collapse;">'
            f'<tr><td align="center"{colour} style="border-bottom:1px solid {self.ink}; padding:0px 3px 1px 3px;">'
            f"{num}</td></tr>"
            f'<tr><td align="center"{colour} style="padding:1px 3px 0px 3px;">{den}</td></tr></table>'
        )

    def big_sum(self, lower: str, upper: str) -> str:
        """∑ with its limits above and below, as in a displayed equation."""
        small = "font-size:small;"
        return (
            '<table cellspacing="0" cellpadding="0">'
            f'<tr><td align="center" style="{small}">{upper}</td></tr>'
            '<tr><td align="center" style="font-size:x-large;">∑</td></tr>'
            f'<tr><td align="center" style="{small}">{lower}</td></tr></table>'
        )

    def cases(self, *lines: tuple[str, str]) -> str:
        """A left brace followed by (value, condition) lines: a piecewise definition."""
        body = "".join(f'<tr><td style="padding-right:10px;">{value}</td><td>{cond}</td></tr>' for value, cond in lines)
        return self.row(
            '<span style="font-size:xx-large; font-weight:200;">{</span>',
            f'<table cellspacing="0" cellpadding="1">{body}</table>',
        )

    # -------------------------------------------------------------- shared notation

    def a_of(self, key_index: str = "") -> str:
        """a(q, k) or a(q, k_i)."""
        return f"{self.var('a')}({self.vec('q')}, {self.vec('k', self.var(key_index) if key_index else '')})"

    def alpha_of(self, key_index: str) -> str:
        return f"{self.var('α')}({self.vec('q')}, {self.vec('k', self.var(key_index))})"

    def masked(self, key_index: str) -> str:
        """ã_i: the score the softmax receives."""
        return f"{self.var('ã')}<sub>{self.var(key_index)}</sub>"


# ---------------------------------------------------------------------------- scoring functions


def _dot(m: _Math, d: int | None) -> str:
    rhs = m.hl(f"{m.transpose(m.vec('q'))}{m.vec('k')}", ("raw_scores", "scores"))
    return m.row(f"{m.hl(m.a_of(), 'scores')} = {rhs}")


def _scaled_dot(m: _Math, d: int | None) -> str:
    num = m.hl(f"{m.transpose(m.vec('q'))}{m.vec('k')}", "raw_scores")
    den = m.sqrt(m.var("d"))
    note = (
        ""
        if d is None
        else "&nbsp;&nbsp;"
        + translate("Formulas", "with {d} = {n}, {root} = {value}").format(
            d=m.var("d"), n=d, root=m.sqrt(str(d)), value=f"{d**0.5:.4g}"
        )
    )
    return m.row(f"{m.hl(m.a_of(), 'scores')} =&nbsp;", m.frac(num, den, bg=m.on("scores")), note)


def _additive(m: _Math, d: int | None) -> str:
    hidden = m.hl(
        f"{m.op('tanh')}({m.vec('W', m.var('q'))}{m.vec('q')} + {m.vec('W', m.var('k'))}{m.vec('k')})", "hidden"
    )
    rhs = m.hl(f"{m.transpose(m.vec('w', m.var('v')))} {hidden}", ("raw_scores", "scores"))
    return m.row(f"{m.hl(m.a_of(), 'scores')} = {rhs}")


def _bilinear(m: _Math, d: int | None) -> str:
    rhs = m.hl(f"{m.transpose(m.vec('q'))}{m.vec('W')}{m.vec('k')}", ("raw_scores", "scores"))
    return m.row(f"{m.hl(m.a_of(), 'scores')} = {rhs}")


def _gaussian(m: _Math, d: int | None) -> str:
    on = m.on(("raw_scores", "scores"))
    return m.row(
        f"{m.hl(m.a_of(), 'scores')} =&nbsp;",
        m.row("−", m.frac("1", "2", bg=on), f"‖{m.vec('q')} − {m.vec('k')}‖<sup>2</sup>", bg=on),
    )


def _summation(m: _Math, d: int | None) -> str:
    on = m.on(("raw_scores", "scores"))
    upper = m.var("d") if d is None else str(d)
    term = f"({m.var('q')}<sub>{m.var('l')}</sub> + {m.var('k')}<sub>{m.var('l')}</sub>)"
    return m.row(
        f"{m.hl(m.a_of(), 'scores')} =&nbsp;", m.row(m.big_sum(f"{m.var('l')}=1", upper), f"&nbsp;{term}", bg=on)
    )


#: HTML of a(q, k) for every scoring function, by name. A scoring function registered in the
#: engine without an entry here fails ``tests/ui/test_pipeline_view.py``.
SCORING_FORMULAS: dict[str, Callable[[_Math, int | None], str]] = {
    "dot": _dot,
    "scaled_dot": _scaled_dot,
    "additive": _additive,
    "bilinear": _bilinear,
    "gaussian": _gaussian,
    "summation": _summation,
}


def missing_formulas() -> list[str]:
    """Scoring functions of the catalogue that have no hand-laid-out formula here (they are shown
    from their LaTeX, see ``latex_to_html``)."""
    return [name for name in catalog.SCORINGS if name not in SCORING_FORMULAS]


_LATEX_SYMBOLS = {
    "top": "⊤",
    "cdot": "·",
    "times": "×",
    "sum": "∑",
    "prod": "∏",
    "infty": "∞",
    "in": "∈",
    "le": "≤",
    "ge": "≥",
    "neq": "≠",
    "approx": "≈",
    "lVert": "‖",
    "rVert": "‖",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "theta": "θ",
    "lambda": "λ",
    "mu": "μ",
    "sigma": "σ",
    "tau": "τ",
    "phi": "φ",
    "psi": "ψ",
    "omega": "ω",
    "Sigma": "Σ",
    "left": "",
    "right": "",
    ",": " ",
    ";": " ",
    "quad": "  ",
}
_LATEX_FUNCTIONS = ("tanh", "exp", "log", "softmax", "max", "min", "cos", "sin", "relu")
_LATEX_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([{}^_])|([A-Za-z])|(\s+)|(.)", re.S)


def latex_to_html(latex: str) -> str:
    """A formula in the LaTeX subset scoring functions are written in, as Qt rich text: bold
    vectors (``mathbf``), sub- and superscripts, fractions, roots, norms and Greek letters.
    Unknown commands lose their backslash rather than show it; single letters are italic."""
    tokens = list(_LATEX_TOKEN.finditer(latex))
    pos = 0

    def group() -> str:
        # One argument: a braced group or a single token.
        nonlocal pos
        if pos < len(tokens) and tokens[pos].group(2) == "{":
            pos += 1
            out = seq(until="}")
            pos += 1
            return out
        return atom() if pos < len(tokens) else ""

    def atom() -> str:
        nonlocal pos
        command, special, letter, space, other = tokens[pos].groups()
        pos += 1
        if command is not None:
            if command in ("mathbf", "boldsymbol"):
                return f"<b>{_strip_italics(group())}</b>"
            if command in ("mathrm", "text", "operatorname", "mathbb"):
                return _strip_italics(group())
            if command in ("frac", "tfrac", "dfrac"):
                num, den = group(), group()
                return f"({num})/({den})" if len(_plain(num)) > 1 or len(_plain(den)) > 1 else f"{num}/{den}"
            if command == "sqrt":
                return f"√({group()})"
            if command in _LATEX_FUNCTIONS:
                return command
            return escape(_LATEX_SYMBOLS.get(command, command))
        if letter is not None:
            return f"<i>{letter}</i>"
        if space is not None:
            return " "
        if special in ("^", "_"):
            tag = "sup" if special == "^" else "sub"
            return f"<{tag}>{group()}</{tag}>"
        return escape(other if other is not None else "")

    def seq(until: str | None = None) -> str:
        parts = []
        while pos < len(tokens) and not (until is not None and tokens[pos].group(2) == until):
            if tokens[pos].group(2) in ("{", "}"):
                parts.append(group() if tokens[pos].group(2) == "{" else "")
                if parts[-1] == "":
                    _skip()
                continue
            parts.append(atom())
        return "".join(parts)

    def _skip() -> None:
        nonlocal pos
        pos += 1

    return seq()


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def _strip_italics(html: str) -> str:
    return html.replace("<i>", "").replace("</i>", "")


def scoring_formula(name: str, *, highlight: str | None = None, d: int | None = None, ink: str = "#202020") -> str:
    """a(q, k) for the scoring function ``name``; ``d`` (the vector length) fills in numbers.

    The built-in ones are laid out by hand with their stages tagged; one registered later is
    shown from the LaTeX it brought (``attnviz.state.catalog``), the whole formula as its raw scores.
    """
    m = _Math(highlight, ink)
    build = SCORING_FORMULAS.get(name)
    info = catalog.SCORINGS.get(name)
    if build is None:
        latex = info.formula if info is not None and info.formula else name
        html = m.hl(latex_to_html(latex), "raw_scores")
    else:
        html = build(m, d)
    note = tr_text(info.note) if info is not None and info.note else ""
    if note:
        html += f'<div style="color:{m.muted};">{note}</div>'
    return html


# ---------------------------------------------------------------------------- softmax and pooling


def _mask_lines(m: _Math, mode: str) -> tuple[tuple[str, str], ...]:
    a_i = m.hl(m.a_of("i"), "scores")
    m_i = f"{m.var('m')}<sub>{m.var('i')}</sub>"
    allowed = m.hl(translate("Formulas", "if {m} = 1").format(m=m_i), "mask")
    masked = m.hl(translate("Formulas", "if {m} = 0").format(m=m_i), "mask")
    if mode == "d2l":
        return ((a_i, allowed), ("−10<sup>6</sup>", masked))
    if mode in ("strict", "neg_inf", "sdpa"):
        return ((a_i, allowed), ("−∞", masked))
    if mode == "float01":
        return (
            (
                f"{a_i} + {m.hl(m.var('m') + '<sub><i>i</i></sub>', 'mask')}",
                translate("Formulas", "for every key: 1 is added, nothing is masked"),
            ),
        )
    if mode == "inverted":
        return ((a_i, masked), ("−∞", allowed))
    return ((a_i, allowed), (translate("Formulas", "masked"), masked))


_EMPTY_ROW_NOTES: dict[str, str] = {
    "d2l": QT_TRANSLATE_NOOP("Formulas", "A query with no valid key gets uniform weights over all keys."),
    "strict": QT_TRANSLATE_NOOP("Formulas", "A query with no valid key gets weights 0 (and output 0)."),
    "neg_inf": QT_TRANSLATE_NOOP("Formulas", "A query with no valid key gets NaN weights (exp(−∞)/0)."),
    "sdpa": QT_TRANSLATE_NOOP("Formulas", "A query with no valid key gets weights 0, as PyTorch's SDPA does."),
    "float01": QT_TRANSLATE_NOOP(
        "Formulas", "Bug on purpose: the 0/1 mask is added to the scores instead of masking them."
    ),
    "inverted": QT_TRANSLATE_NOOP("Formulas", "Bug on purpose: the mask's polarity is flipped, padding is attended."),
}


def softmax_formula(
    mask_mode: str = "d2l", *, highlight: str | None = None, ink: str = "#202020", brief: bool = False
) -> str:
    """The masked softmax: α(q, k_i) = exp(ã_i) / ∑_j exp(ã_j), with ã_i defined by the mask mode.

    ``brief`` (the walk on a slide): of the notes under it, only the one the step highlighted is
    about (what m_i is at the mask and the masked scores, the mask mode at the weights)."""
    m = _Math(highlight, ink)
    num = f"{m.op('exp')}({m.hl(m.masked('i'), 'masked_scores')})"
    den = m.row(
        m.big_sum(f"{m.var('j')}=1", m.var("m")), f"&nbsp;{m.op('exp')}({m.hl(m.masked('j'), 'masked_scores')})"
    )
    softmax = m.row(
        f"{m.hl(m.alpha_of('i'), 'weights')} = {m.op('softmax')}({m.hl(m.masked('i'), 'masked_scores')}) =&nbsp;",
        m.frac(num, den, bg=m.on("weights")),
    )
    definition = m.row(f"{m.hl(m.masked('i'), 'masked_scores')} =&nbsp;", m.cases(*_mask_lines(m, mask_mode)))
    mask_def = m.hl(
        translate(
            "Formulas", "{m} = 1 when key {i} may be attended (within the valid length, and causal when set)"
        ).format(m=f"{m.var('m')}<sub>{m.var('i')}</sub>", i=m.var("i")),
        "mask",
    )
    label = tr_text(catalog.MASK_MODES.label(mask_mode))
    note = tr_text(_EMPTY_ROW_NOTES.get(mask_mode, ""))
    mode = translate("Formulas", "Mask mode {name}.").format(name=f"<b>{escape(label)}</b>")
    notes = f"{mask_def}.<br>{mode} {note}"
    if brief and highlight in ("mask", "masked_scores"):
        notes = f"{mask_def}."
    elif brief and highlight == "weights":
        notes = f"{mode} {note}"
    return softmax + definition + f'<div style="color:{m.muted};">{notes}</div>'


def pooling_formula(*, dropout: float = 0.0, highlight: str | None = None, ink: str = "#202020") -> str:
    """Attention pooling f = ∑_i α(q, k_i) v_i, with dropout on the weights when it is on."""
    m = _Math(highlight, ink)
    lhs = m.hl(
        f"{m.var('f')}({m.vec('q')}, ({m.vec('k', '1')}, {m.vec('v', '1')}), …, "
        f"({m.vec('k', m.var('m'))}, {m.vec('v', m.var('m'))}))",
        "output",
    )
    alpha = m.hl(m.alpha_of("i"), "weights")
    weight = m.hl(f"{m.op('dropout')}({alpha})" if dropout > 0 else alpha, "applied_weights")
    body = m.row(
        f"{lhs} =&nbsp;", m.big_sum(f"{m.var('i')}=1", m.var("m")), f"&nbsp;{weight}&nbsp;{m.vec('v', m.var('i'))}"
    )
    if dropout > 0:
        note = translate(
            "Formulas",
            "dropout zeroes each weight with probability {p} and scales the rest by 1/(1 − {p}), in training only",
        ).format(p=f"{dropout:g}")
    else:
        note = translate("Formulas", "no dropout: the weights multiply the values as they are")
    return body + f'<div style="color:{m.muted};">{m.hl(note, "applied_weights")}</div>'


def matrix_formula(*, highlight: str | None = None, ink: str = "#202020") -> str:
    """softmax(QKᵀ/√d) V: the scaled dot-product attention of n queries at once."""
    m = _Math(highlight, ink)
    frac = m.frac(m.hl(f"{m.vec('Q')}{m.transpose(m.vec('K'))}", "raw_scores"), m.sqrt(m.var("d")), bg=m.on("scores"))
    return m.row(
        f"{m.op('softmax')}",
        "<span style='font-size:x-large;'>(</span>",
        frac,
        f"<span style='font-size:x-large;'>)</span>{m.vec('V')} ∈ ℝ<sup>{m.var('n')}×{m.var('v')}</sup>",
    )


def pipeline_formulas(
    scoring: str,
    mask_mode: str = "d2l",
    *,
    dropout: float = 0.0,
    d: int | None = None,
    highlight: str | None = None,
    ink: str = "#202020",
) -> str:
    """The three equations of the chapter for one configuration, headed, as one HTML document."""
    label = tr_text(catalog.SCORINGS.label(scoring))

    def head(text: str) -> str:
        return f'<p style="margin-top:10px; margin-bottom:3px;"><b>{escape(text)}</b></p>'

    parts = [
        head(translate("Formulas", "1. Scoring function: {name}").format(name=label)),
        scoring_formula(scoring, highlight=highlight, d=d, ink=ink),
        head(translate("Formulas", "2. Masked softmax: the attention weights")),
        softmax_formula(mask_mode, highlight=highlight, ink=ink),
        head(translate("Formulas", "3. Attention pooling: the output")),
        pooling_formula(dropout=dropout, highlight=highlight, ink=ink),
    ]
    if scoring == "scaled_dot":
        parts += [head(translate("Formulas", "All queries at once")), matrix_formula(highlight=highlight, ink=ink)]
    return f'<div style="color:{ink};">' + "".join(parts) + "</div>"
