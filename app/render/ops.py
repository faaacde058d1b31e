"""What each operation is, in words: its mark in the picture, what it does, why it saves what
it saves, and what its backward sends to each input.

One entry per grad_fn class the engine has (engine/functions.py), named as PyTorch names them;
a test fails when the engine gains a class that has no entry here. Templates use {0}, {1}, {2}
for the inputs' names, {g} for the gradient that arrives and {i} for an input's position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    symbol: str  # its mark on the op node in the tensors view
    does: str  # the forward, as a verb phrase: "multiplies {0} and {1}"
    sends: tuple[str, ...]  # per input: what backward sends it; one entry for every input
    why: str = ""  # why it saves what it saves: "It saves a and b, because <why>."
    why_not: str = "its backward needs no values from the forward pass"  # when it saves none
    inplace: str = ""  # the in-place form (x += y), when it has one: "adds {1} to {0}"
    number: str = ""  # an op of one tensor and a Python number: how to name the number, {1}


OPS: dict[str, Op] = {
    # ***** pointwise, two inputs *****
    "AddBackward0": Op(
        symbol="+",
        does="adds {0} and {1}",
        why_not="adding passes the gradient through unchanged, so it needs no values",
        sends=("{g}", "{g}"),
        inplace="adds {1} to {0}",
    ),
    "SubBackward0": Op(
        symbol="−",
        does="subtracts {1} from {0}",
        why_not="it passes the gradient through, negated for what is subtracted",
        sends=("{g}", "-{g}"),
        inplace="subtracts {1} from {0}",
    ),
    "RsubBackward1": Op(
        symbol="−",
        does="subtracts {0} from {1}",
        why_not="the gradient is just the incoming one, negated",
        sends=("-{g}",),
        number="a number",
    ),
    "MulBackward0": Op(
        symbol="×",
        does="multiplies {0} and {1}",
        why="each factor's gradient is the incoming gradient times the other factor",
        why_not="the other factor is a plain number, which the node keeps as it is",
        sends=("{g}·{1}", "{g}·{0}"),
        inplace="multiplies {0} by {1}",
    ),
    "DivBackward0": Op(
        symbol="÷",
        does="divides {0} by {1}",
        why="the gradient for {0} is grad/{1}, and for {1} it is -grad·{0}/{1}²",
        why_not="the divisor is a plain number, which the node keeps as it is",
        sends=("{g}/{1}", "-{g}·{0}/{1}²"),
        inplace="divides {0} by {1}",
    ),
    "PowBackward0": Op(
        symbol="**",
        does="raises {0} to the power {1}",
        why="the derivative of xⁿ is n·xⁿ⁻¹, which needs x",
        sends=("{g}·{1}·{0}^({1}-1)",),
        number="n",
        inplace="raises {0} to the power {1}",
    ),
    "PowBackward1": Op(
        symbol="**",
        does="raises {0} to the power {1}",
        why="the base's gradient needs both inputs, and the exponent's needs the result",
        sends=("{g}·{1}·{0}^({1}-1)", "{g}·result·log({0})"),
        inplace="raises {0} to the power {1}",
    ),
    "PowBackward2": Op(
        symbol="**",
        does="raises {1} to the power {0}",
        why="the derivative of cˣ is cˣ·log(c), the result times a constant (it keeps the "
        "exponent x too, as PyTorch does)",
        sends=("{g}·result·log({1})",),
        number="c",
    ),
    "RemainderBackward0": Op(
        symbol="%",
        does="takes {0} modulo {1}",
        why_not="a remainder has slope 1 almost everywhere, so it passes the gradient through",
        sends=("{g}",),
        number="a number",
    ),
    "RemainderBackward1": Op(
        symbol="%",
        does="takes {0} modulo {1}",
        why="the gradient for {1} is -grad·floor({0}/{1}), which needs both",
        sends=("{g}", "-{g}·floor({0}/{1})"),
    ),
    "FloorDivide": Op(
        symbol="//",
        does="divides {0} by {1} and rounds down",
        why_not="PyTorch has no derivative for floor division, so it is never recorded",
        sends=("0", "0"),
    ),
    "MaximumBackward0": Op(
        symbol="max",
        does="takes the larger of {0} and {1} at each element",
        why="backward must know which input was larger at each element",
        sends=("{g} where {0} was larger", "{g} where {1} was larger"),
    ),
    "MinimumBackward0": Op(
        symbol="min",
        does="takes the smaller of {0} and {1} at each element",
        why="backward must know which input was smaller at each element",
        sends=("{g} where {0} was smaller", "{g} where {1} was smaller"),
    ),
    # ***** pointwise, one input *****
    "NegBackward0": Op(
        symbol="−",
        does="negates {0}",
        why_not="negating only flips the gradient's sign",
        sends=("-{g}",),
        inplace="negates {0}",
    ),
    "ExpBackward0": Op(
        symbol="exp",
        does="takes e to the power {0}",
        why="the derivative of eˣ is eˣ itself, the result",
        sends=("{g}·exp({0})",),
        inplace="takes e to the power {0}",
    ),
    "LogBackward0": Op(
        symbol="log",
        does="takes the natural log of {0}",
        why="the derivative of log(x) is 1/x, which needs x",
        sends=("{g}/{0}",),
        inplace="takes the natural log of {0}",
    ),
    "SinBackward0": Op(
        symbol="sin",
        does="takes the sine of {0}",
        why="the derivative of sin(x) is cos(x), which needs x",
        sends=("{g}·cos({0})",),
        inplace="takes the sine of {0}",
    ),
    "CosBackward0": Op(
        symbol="cos",
        does="takes the cosine of {0}",
        why="the derivative of cos(x) is -sin(x), which needs x",
        sends=("-{g}·sin({0})",),
        inplace="takes the cosine of {0}",
    ),
    "TanhBackward0": Op(
        symbol="tanh",
        does="applies tanh to {0}",
        why="the derivative of tanh(x) is 1 - tanh²(x), written with the result",
        sends=("{g}·(1 - tanh²({0}))",),
        inplace="applies tanh to {0}",
    ),
    "SigmoidBackward0": Op(
        symbol="σ",
        does="applies the sigmoid to {0}",
        why="the sigmoid's derivative is σ·(1 - σ), written with the result σ",
        sends=("{g}·σ({0})·(1 - σ({0}))",),
        inplace="applies the sigmoid to {0}",
    ),
    "ReluBackward0": Op(
        symbol="relu",
        does="applies ReLU to {0} (negatives become 0)",
        why="the result shows where {0} was positive, the only places the gradient passes",
        sends=("{g} where {0} > 0, else 0",),
        inplace="applies ReLU to {0}",
    ),
    "SqrtBackward0": Op(
        symbol="√",
        does="takes the square root of {0}",
        why="the derivative of √x is 1/(2√x), written with the result",
        sends=("{g}/(2·√{0})",),
        inplace="takes the square root of {0}",
    ),
    "AbsBackward0": Op(
        symbol="abs",
        does="takes the absolute value of {0}",
        why="the derivative of |x| is the sign of x, which needs x",
        sends=("{g}·sign({0})",),
        inplace="takes the absolute value of {0}",
    ),
    "ReciprocalBackward0": Op(
        symbol="1/x",
        does="takes 1/{0}",
        why="the derivative of 1/x is -1/x², which is minus the result squared",
        sends=("-{g}/{0}²",),
    ),
    "ClampBackward1": Op(
        symbol="clamp",
        does="clamps {0} into a range",
        why="backward must know which elements were inside the range",
        sends=("{g} where {0} was inside the range, else 0",),
        inplace="clamps {0} into a range",
    ),
    "ClampMinBackward0": Op(
        symbol="clamp",
        does="clamps {0} from below",
        why="backward must know which elements were above the bound",
        sends=("{g} where {0} was above the bound, else 0",),
    ),
    "ClampMaxBackward0": Op(
        symbol="clamp",
        does="clamps {0} from above",
        why="backward must know which elements were below the bound",
        sends=("{g} where {0} was below the bound, else 0",),
    ),
    "CloneBackward0": Op(
        symbol="clone",
        does="copies {0}",
        why_not="a copy passes the gradient straight through",
        sends=("{g}",),
    ),
    "ToCopyBackward0": Op(
        symbol="to",
        does="converts {0} to another dtype",
        why_not="a conversion passes the gradient straight through (converted back)",
        sends=("{g}",),
    ),
    "WhereBackward0": Op(
        symbol="where",
        does="takes {0} where the condition holds and {1} elsewhere",
        why_not="it keeps the condition, not the values",
        sends=("{g} where the condition held, else 0", "{g} where it did not, else 0"),
    ),
    # ***** elementwise (more) *****
    "RoundBackward0": Op(
        symbol="round",
        does="rounds {0} to whole numbers (halves to even)",
        why_not="rounding is flat almost everywhere, so its gradient is 0",
        sends=("0",),
        inplace="rounds {0} to whole numbers",
    ),
    "RoundBackward1": Op(
        symbol="round",
        does="rounds {0} to a number of decimals",
        why_not="rounding is flat almost everywhere, so its gradient is 0",
        sends=("0",),
        inplace="rounds {0} to a number of decimals",
    ),
    "FloorBackward0": Op(
        symbol="floor",
        does="rounds {0} down",
        why_not="rounding is flat almost everywhere, so its gradient is 0",
        sends=("0",),
        inplace="rounds {0} down",
    ),
    "CeilBackward0": Op(
        symbol="ceil",
        does="rounds {0} up",
        why_not="rounding is flat almost everywhere, so its gradient is 0",
        sends=("0",),
    ),
    "TruncBackward0": Op(
        symbol="trunc",
        does="rounds {0} towards zero",
        why_not="rounding is flat almost everywhere, so its gradient is 0",
        sends=("0",),
    ),
    "FracBackward0": Op(
        symbol="frac",
        does="keeps the fractional part of {0}",
        why_not="the fractional part moves exactly as {0} does, so the gradient passes through",
        sends=("{g}",),
    ),
    "SignBackward0": Op(
        symbol="sign",
        does="takes the sign of {0} (-1, 0 or 1)",
        why_not="the sign is flat almost everywhere, so its gradient is 0",
        sends=("0",),
    ),
    "SgnBackward0": Op(
        symbol="sgn",
        does="takes the sign of {0} (-1, 0 or 1)",
        why="PyTorch keeps them for complex numbers; for real ones the gradient is 0",
        sends=("0",),
    ),
    "RsqrtBackward0": Op(
        symbol="1/√",
        does="takes 1/√{0}",
        why="the derivative of 1/√x is -1/(2x√x), written with the result",
        sends=("-{g}·rsqrt({0})³/2",),
    ),
    "TanBackward0": Op(
        symbol="tan",
        does="takes the tangent of {0}",
        why="the derivative of tan(x) is 1 + tan²(x), written with the result",
        sends=("{g}·(1 + tan²({0}))",),
    ),
    "AsinBackward0": Op(
        symbol="asin",
        does="takes the arcsine of {0}",
        why="the derivative of asin(x) is 1/√(1 - x²), which needs x",
        sends=("{g}/√(1 - {0}²)",),
    ),
    "AcosBackward0": Op(
        symbol="acos",
        does="takes the arccosine of {0}",
        why="the derivative of acos(x) is -1/√(1 - x²), which needs x",
        sends=("-{g}/√(1 - {0}²)",),
    ),
    "AtanBackward0": Op(
        symbol="atan",
        does="takes the arctangent of {0}",
        why="the derivative of atan(x) is 1/(1 + x²), which needs x",
        sends=("{g}/(1 + {0}²)",),
    ),
    "SinhBackward0": Op(
        symbol="sinh",
        does="takes the hyperbolic sine of {0}",
        why="the derivative of sinh(x) is cosh(x), which needs x",
        sends=("{g}·cosh({0})",),
    ),
    "CoshBackward0": Op(
        symbol="cosh",
        does="takes the hyperbolic cosine of {0}",
        why="the derivative of cosh(x) is sinh(x), which needs x",
        sends=("{g}·sinh({0})",),
    ),
    "AsinhBackward0": Op(
        symbol="asinh",
        does="takes the inverse hyperbolic sine of {0}",
        why="the derivative of asinh(x) is 1/√(x² + 1), which needs x",
        sends=("{g}/√({0}² + 1)",),
    ),
    "AcoshBackward0": Op(
        symbol="acosh",
        does="takes the inverse hyperbolic cosine of {0}",
        why="the derivative of acosh(x) is 1/√(x² - 1), which needs x",
        sends=("{g}/√({0}² - 1)",),
    ),
    "AtanhBackward0": Op(
        symbol="atanh",
        does="takes the inverse hyperbolic tangent of {0}",
        why="the derivative of atanh(x) is 1/(1 - x²), which needs x",
        sends=("{g}/(1 - {0}²)",),
    ),
    "ErfBackward0": Op(
        symbol="erf",
        does="applies the error function to {0}",
        why="the derivative of erf(x) is 2/√π·e^(-x²), which needs x",
        sends=("{g}·2/√π·exp(-{0}²)",),
    ),
    "ErfcBackward0": Op(
        symbol="erfc",
        does="applies the complementary error function to {0}",
        why="the derivative of erfc(x) is -2/√π·e^(-x²), which needs x",
        sends=("-{g}·2/√π·exp(-{0}²)",),
    ),
    "Exp2Backward0": Op(
        symbol="2ˣ",
        does="takes 2 to the power {0}",
        why="the derivative of 2ˣ is 2ˣ·ln 2, written with the result",
        sends=("{g}·2^{0}·ln 2",),
    ),
    "Expm1Backward0": Op(
        symbol="expm1",
        does="takes eˣ - 1 of {0}",
        why="the derivative of eˣ - 1 is eˣ, which is the result plus 1",
        sends=("{g}·exp({0})",),
    ),
    "Log2Backward0": Op(
        symbol="log₂",
        does="takes the base-2 log of {0}",
        why="the derivative of log₂(x) is 1/(x·ln 2), which needs x",
        sends=("{g}/({0}·ln 2)",),
    ),
    "Log10Backward0": Op(
        symbol="log₁₀",
        does="takes the base-10 log of {0}",
        why="the derivative of log₁₀(x) is 1/(x·ln 10), which needs x",
        sends=("{g}/({0}·ln 10)",),
    ),
    "Log1PBackward0": Op(
        symbol="log1p",
        does="takes log(1 + {0})",
        why="the derivative of log(1 + x) is 1/(1 + x), which needs x",
        sends=("{g}/(1 + {0})",),
    ),
    "Atan2Backward0": Op(
        symbol="atan2",
        does="takes the angle of the point ({1}, {0})",
        why="both gradients divide by {0}² + {1}², which needs both inputs",
        sends=("{g}·{1}/({0}² + {1}²)", "-{g}·{0}/({0}² + {1}²)"),
    ),
    "FmaxBackward0": Op(
        symbol="fmax",
        does="takes the larger of {0} and {1} at each element, ignoring nan",
        why="backward must know which input was chosen at each element",
        sends=("{g} where {0} was chosen (ties too)", "{g} where {1} was chosen"),
    ),
    "FminBackward0": Op(
        symbol="fmin",
        does="takes the smaller of {0} and {1} at each element, ignoring nan",
        why="backward must know which input was chosen at each element",
        sends=("{g} where {0} was chosen (ties too)", "{g} where {1} was chosen"),
    ),
    "LerpBackward0": Op(
        symbol="lerp",
        does="moves from {0} towards {1} by a fixed weight",
        why_not="it keeps the weight, a plain number",
        sends=("{g}·(1 - weight)", "{g}·weight"),
        inplace="moves {0} towards {1} by a fixed weight",
    ),
    "LerpBackward1": Op(
        symbol="lerp",
        does="moves from {0} towards {1} by the weight {2}",
        why="the weight's gradient is the distance from {0} to {1}",
        sends=("{g}·(1 - {2})", "{g}·{2}", "{g}·({1} - {0})"),
        inplace="moves {0} towards {1} by the weight {2}",
    ),
    "AddcmulBackward0": Op(
        symbol="addcmul",
        does="adds value·{1}·{2} to {0}",
        why="each factor's gradient is the incoming gradient times the other factor",
        sends=("{g}", "{g}·value·{2}", "{g}·value·{1}"),
        inplace="adds value·{1}·{2} to {0}",
    ),
    "AddcdivBackward0": Op(
        symbol="addcdiv",
        does="adds value·{1}/{2} to {0}",
        why="the gradients for {1} and {2} need the divisor (and {1} for {2})",
        sends=("{g}", "{g}·value/{2}", "-{g}·value·{1}/{2}²"),
        inplace="adds value·{1}/{2} to {0}",
    ),
    # ***** reductions *****
    "SumBackward0": Op(
        symbol="sum",
        does="adds up all the elements of {0}",
        why_not="every element's gradient is just the incoming gradient, so it needs no values",
        sends=("{g} copied to every element",),
    ),
    "SumBackward1": Op(
        symbol="sum",
        does="sums {0} along a dimension",
        why_not="every element's gradient is just the incoming gradient, so it needs no values",
        sends=("{g} copied along the summed dimension",),
    ),
    "MeanBackward0": Op(
        symbol="mean",
        does="averages all the elements of {0}",
        why_not="every element gets the incoming gradient divided by the count",
        sends=("{g}/n for each of the n elements",),
    ),
    "MeanBackward1": Op(
        symbol="mean",
        does="averages {0} along a dimension",
        why_not="every element gets the incoming gradient divided by the count",
        sends=("{g}/n copied along the averaged dimension",),
    ),
    "MaxBackward1": Op(
        symbol="max",
        does="takes the largest element of {0}",
        why="backward must find which elements equal the maximum",
        sends=("{g} shared among the largest elements",),
    ),
    "MinBackward1": Op(
        symbol="min",
        does="takes the smallest element of {0}",
        why="backward must find which elements equal the minimum",
        sends=("{g} shared among the smallest elements",),
    ),
    "MaxBackward0": Op(
        symbol="max",
        does="takes the largest elements of {0} along a dimension",
        why_not="it keeps the indices of the maxima, not any values",
        sends=("{g} placed where each maximum was",),
    ),
    "MinBackward0": Op(
        symbol="min",
        does="takes the smallest elements of {0} along a dimension",
        why_not="it keeps the indices of the minima, not any values",
        sends=("{g} placed where each minimum was",),
    ),
    # ***** reductions and scans (more) *****
    "ProdBackward0": Op(
        symbol="prod",
        does="multiplies all the elements of {0} together",
        why="each element's gradient is the product of all the others, which needs the values",
        sends=("{g}·(the product of the other elements)",),
    ),
    "ProdBackward1": Op(
        symbol="prod",
        does="multiplies {0} together along a dimension",
        why="each element's gradient is the product of the others along the dimension",
        sends=("{g}·(the product of the others along the dimension)",),
    ),
    "VarBackward0": Op(
        symbol="var",
        does="takes the variance of {0}",
        why="each element's gradient depends on how far it lies from the mean",
        sends=("{g}·2·({0} - mean)/(n - correction)",),
    ),
    "StdBackward0": Op(
        symbol="std",
        does="takes the standard deviation of {0}",
        why="each element's gradient needs its distance from the mean and the std itself",
        sends=("{g}·({0} - mean)/((n - correction)·std)",),
    ),
    "LinalgVectorNormBackward0": Op(
        symbol="‖·‖",
        does="takes the norm of {0}",
        why="the gradient of a norm points along {0}, scaled by the norm itself",
        sends=("{g}·{0}/‖{0}‖ (for the 2-norm)",),
    ),
    "CumsumBackward0": Op(
        symbol="cumsum",
        does="takes running totals of {0} along a dimension",
        why_not="each element feeds every later total, so it gets the sum of their gradients",
        sends=("{g} summed from the end back to each position",),
    ),
    "CumprodBackward0": Op(
        symbol="cumprod",
        does="takes running products of {0} along a dimension",
        why="each running product's gradient needs the other factors in it",
        sends=("{g}·(each later running product without this element)",),
    ),
    "LogsumexpBackward0": Op(
        symbol="lse",
        does="takes log(sum(exp({0}))) along a dimension",
        why="its gradient is the softmax of {0}, exp({0} - result)",
        sends=("{g}·softmax({0})",),
    ),
    "TopkBackward0": Op(
        symbol="topk",
        does="picks the k largest elements of {0}",
        why_not="it keeps the indices it picked, not any values",
        sends=("{g} put back where each picked value came from",),
    ),
    "SortBackward0": Op(
        symbol="sort",
        does="sorts {0} along a dimension",
        why_not="it keeps the indices of the sorted order, not any values",
        sends=("{g} put back where each sorted value came from",),
    ),
    "SortBackward1": Op(
        symbol="sort",
        does="sorts {0} along a dimension, keeping equal values in order",
        why_not="it keeps the indices of the sorted order, not any values",
        sends=("{g} put back where each sorted value came from",),
    ),
    "AmaxBackward0": Op(
        symbol="amax",
        does="takes the largest elements of {0} over some dimensions",
        why="backward must find which elements equal the maximum",
        sends=("{g} shared evenly among the largest elements",),
    ),
    "AminBackward0": Op(
        symbol="amin",
        does="takes the smallest elements of {0} over some dimensions",
        why="backward must find which elements equal the minimum",
        sends=("{g} shared evenly among the smallest elements",),
    ),
    # ***** shapes and views *****
    "ViewBackward0": Op(
        symbol="view",
        does="views {0} with a new shape (no copy)",
        why_not="reshaping needs only the old shape",
        sends=("{g} reshaped back",),
    ),
    "UnsafeViewBackward0": Op(
        symbol="reshape",
        does="reshapes a copy of {0}",
        why_not="reshaping needs only the old shape",
        sends=("{g} reshaped back",),
    ),
    "AliasBackward0": Op(
        symbol="alias",
        does="makes a new view of all of {0}",
        why_not="nothing changes, so the gradient passes straight through",
        sends=("{g}",),
    ),
    "TBackward0": Op(
        symbol="ᵀ",
        does="transposes {0}",
        why_not="transposing needs no values",
        sends=("{g} transposed back",),
    ),
    "PermuteBackward0": Op(
        symbol="permute",
        does="reorders the dimensions of {0}",
        why_not="reordering dimensions needs no values",
        sends=("{g} with its dimensions put back",),
    ),
    "TransposeBackward0": Op(
        symbol="transpose",
        does="swaps two dimensions of {0}",
        why_not="swapping dimensions needs no values",
        sends=("{g} with the two dimensions swapped back",),
    ),
    "TransposeBackward1": Op(
        symbol="transpose_",
        does="swaps two dimensions of {0} in place",
        why_not="swapping dimensions needs no values",
        sends=("{g} with the two dimensions swapped back",),
    ),
    "SqueezeBackward0": Op(
        symbol="squeeze",
        does="drops the size-1 dimensions of {0}",
        why_not="it needs only the old shape",
        sends=("{g} with the size-1 dimensions put back",),
    ),
    "SqueezeBackward1": Op(
        symbol="squeeze",
        does="drops a size-1 dimension of {0}",
        why_not="it needs only the old shape",
        sends=("{g} with the size-1 dimension put back",),
    ),
    "SqueezeBackward4": Op(
        symbol="squeeze",
        does="drops size-1 dimensions of {0}",
        why_not="it needs only the old shape",
        sends=("{g} with the size-1 dimensions put back",),
    ),
    "UnsqueezeBackward0": Op(
        symbol="unsqueeze",
        does="adds a size-1 dimension to {0}",
        why_not="it needs only where the dimension went",
        sends=("{g} with that dimension removed",),
    ),
    "ExpandBackward0": Op(
        symbol="expand",
        does="stretches {0} to a bigger shape without copying",
        why_not="it needs only the old shape",
        sends=("{g} summed over the stretched dimensions",),
    ),
    "SelectBackward0": Op(
        symbol="[i]",
        does="picks one slice of {0}",
        why_not="it keeps only the index",
        sends=("{g} at the picked index, zeros elsewhere",),
    ),
    "SliceBackward0": Op(
        symbol="[:]",
        does="takes a slice of {0}",
        why_not="it keeps only the range",
        sends=("{g} in the sliced range, zeros elsewhere",),
    ),
    "IndexBackward0": Op(
        symbol="[idx]",
        does="picks elements of {0} by index",
        why_not="it keeps only the indices",
        sends=("{g} added at the picked positions, zeros elsewhere",),
    ),
    "UnbindBackward0": Op(
        symbol="unbind",
        does="splits {0} into its slices (iterating over a tensor does this)",
        why_not="it needs only which dimension it split",
        sends=("the slices' gradients stacked back together",),
    ),
    "StackBackward0": Op(
        symbol="stack",
        does="stacks its inputs into one tensor along a new dimension",
        why_not="each input's gradient is just its slice of the incoming one",
        sends=("slice {i} of {g}",),
    ),
    "CatBackward0": Op(
        symbol="cat",
        does="joins its inputs end to end",
        why_not="each input's gradient is just its part of the incoming one",
        sends=("the part of {g} that came from input {i}",),
    ),
    # ***** shapes and indexing (more) *****
    "ReshapeAliasBackward0": Op(
        symbol="reshape",
        does="reads {0} in a new shape without copying (its memory allows it)",
        why_not="reshaping needs only the old shape",
        sends=("{g} reshaped back",),
    ),
    "SplitBackward0": Op(
        symbol="split",
        does="splits {0} into equal pieces along a dimension (views, no copy)",
        why_not="it needs only where the pieces start and end",
        sends=("the pieces' gradients put back side by side",),
    ),
    "SplitWithSizesBackward0": Op(
        symbol="split",
        does="splits {0} into pieces of the given sizes (views, no copy)",
        why_not="it needs only where the pieces start and end",
        sends=("the pieces' gradients put back side by side",),
    ),
    "GatherBackward0": Op(
        symbol="gather",
        does="gathers values of {0} at the positions an index tensor gives",
        why_not="it keeps only the index tensor",
        sends=("{g} added back where each value came from, zeros elsewhere",),
    ),
    "ScatterBackward0": Op(
        symbol="scatter",
        does="writes {1}'s values into a copy of {0} at the positions an index tensor gives",
        why_not="it keeps only the index tensor",
        sends=("{g}, zeroed where values were written", "{g} gathered at the written positions"),
        inplace="writes {1}'s values into {0} at the indexed positions",
    ),
    "ScatterBackward1": Op(
        symbol="scatter",
        does="writes a number into a copy of {0} at the positions an index tensor gives",
        why_not="it keeps only the index tensor",
        sends=("{g}, zeroed where the number was written",),
        inplace="writes a number into {0} at the indexed positions",
        number="a number",
    ),
    "ScatterAddBackward0": Op(
        symbol="scatter_add",
        does="adds {1}'s values into a copy of {0} at the positions an index tensor gives",
        why_not="adding passes the gradient through; it keeps only the index tensor",
        sends=("{g}", "{g} gathered at the positions it was added to"),
        inplace="adds {1}'s values into {0} at the indexed positions",
    ),
    "IndexSelectBackward0": Op(
        symbol="index_select",
        does="picks whole slices of {0} along a dimension by index",
        why_not="it keeps only the indices",
        sends=("{g} added back at the picked slices, zeros elsewhere",),
    ),
    "DiagonalBackward0": Op(
        symbol="diagonal",
        does="views the diagonal of {0} (no copy)",
        why_not="it needs only which diagonal it took",
        sends=("{g} on the diagonal, zeros elsewhere",),
    ),
    "IndexPutBackward0": Op(
        symbol="[idx]=",
        does="writes {1} into {0} at the positions index tensors give",
        why_not="it keeps only the indices",
        sends=("{g}, zeroed where values were written", "{g} at the written positions"),
        inplace="writes {1} into {0} at the indexed positions",
    ),
    "MaskedFillBackward0": Op(
        symbol="masked_fill",
        does="fills {0} with a number where a mask is True",
        why_not="it keeps only the mask",
        sends=("{g} where the mask is False, 0 where it filled",),
        inplace="fills {0} with a number where a mask is True",
        number="a number",
    ),
    "MaskedFillBackward1": Op(
        symbol="masked_fill",
        does="fills {0} with the value {1} where a mask is True",
        why_not="it keeps only the mask",
        sends=("{g} where the mask is False", "the sum of {g} where the mask is True"),
        inplace="fills {0} with {1} where a mask is True",
    ),
    "MaskedSelectBackward0": Op(
        symbol="masked_select",
        does="picks the elements of {0} where a mask is True, as one flat tensor",
        why_not="it keeps only the mask",
        sends=("{g} put back where the mask is True, zeros elsewhere",),
    ),
    "RepeatBackward0": Op(
        symbol="repeat",
        does="tiles copies of {0} side by side",
        why_not="it needs only how many copies it made",
        sends=("{g} summed over the copies",),
    ),
    "RollBackward0": Op(
        symbol="roll",
        does="rolls the elements of {0} along a dimension, wrapping around",
        why_not="it needs only how far it rolled",
        sends=("{g} rolled back the other way",),
    ),
    "FlipBackward0": Op(
        symbol="flip",
        does="reverses the order of {0} along some dimensions",
        why_not="it needs only which dimensions it reversed",
        sends=("{g} flipped back",),
    ),
    "TrilBackward0": Op(
        symbol="tril",
        does="keeps {0} on and below a diagonal, zeroing the rest",
        why_not="it needs only the diagonal",
        sends=("{g} on and below the diagonal, 0 above",),
    ),
    "TriuBackward0": Op(
        symbol="triu",
        does="keeps {0} on and above a diagonal, zeroing the rest",
        why_not="it needs only the diagonal",
        sends=("{g} on and above the diagonal, 0 below",),
    ),
    "FillBackward3": Op(
        symbol="fill_",
        does="fills {0} with the value {1}",
        why_not="the old values no longer matter, and the value gets the whole gradient",
        sends=("0", "the sum of {g}"),
        inplace="fills {0} with {1}",
    ),
    "CopySlices": Op(
        symbol="copy_slices",
        does="changes part of {0} in place through a view",
        why_not="it keeps the in-place op and where the view sits in {0}",
        sends=(
            "{g}, with the view's part replaced by what the in-place op sends back",
            "what the in-place op sends to {1}",
        ),
        inplace="changes part of {0} through a view, using {1}",
    ),
    "AsStridedBackward0": Op(
        symbol="view",
        does="reads the part of {0} a view shows, after {0} was changed in place",
        why_not="it keeps only where the view sits in {0}",
        sends=("{g} placed at the view's elements, zeros elsewhere",),
    ),
    # ***** linear algebra *****
    "MmBackward0": Op(
        symbol="@",
        does="multiplies the matrices {0} and {1}",
        why="each matrix's gradient is the incoming gradient times the other matrix",
        sends=("{g} @ {1}ᵀ", "{0}ᵀ @ {g}"),
    ),
    "MvBackward0": Op(
        symbol="@",
        does="multiplies the matrix {0} by the vector {1}",
        why="each input's gradient needs the other input",
        sends=("outer({g}, {1})", "{0}ᵀ @ {g}"),
    ),
    "DotBackward0": Op(
        symbol="dot",
        does="takes the dot product of {0} and {1}",
        why="each vector's gradient is the incoming gradient times the other vector",
        sends=("{g}·{1}", "{g}·{0}"),
    ),
    "VdotBackward0": Op(
        symbol="vdot",
        does="takes the dot product of {0} and {1} (conjugating {0}, a no-op on real numbers)",
        why="each vector's gradient is the incoming gradient times the other vector",
        sends=("{g}·{1}", "{g}·{0}"),
    ),
    "AddmmBackward0": Op(
        symbol="addmm",
        does="computes {0} + {1} @ {2}, the heart of nn.Linear",
        why="each matrix's gradient needs the other matrix",
        sends=("{g} summed over the batch", "{g} @ {2}ᵀ", "{1}ᵀ @ {g}"),
    ),
    # ***** matrix products (more) *****
    "BmmBackward0": Op(
        symbol="bmm",
        does="multiplies the matrices of {0} and {1} batch by batch",
        why="each batch's gradient is the incoming gradient times the other matrix",
        sends=("{g} @ {1}ᵀ, batch by batch", "{0}ᵀ @ {g}, batch by batch"),
    ),
    # ***** softmax and losses *****
    "SoftmaxBackward0": Op(
        symbol="softmax",
        does="applies softmax to {0}",
        why="the softmax's derivative is written with its output",
        sends=("result·({g} - sum({g}·result))",),
    ),
    "LogSoftmaxBackward0": Op(
        symbol="log_softmax",
        does="applies log-softmax to {0}",
        why="the derivative is written with its output (softmax is exp of it)",
        sends=("{g} - softmax({0})·sum({g})",),
    ),
    "MseLossBackward0": Op(
        symbol="mse",
        does="takes the mean squared error between {0} and {1}",
        why="the gradient is 2·({0} - {1})/n, which needs both",
        sends=("{g}·2·({0} - {1})/n", "-{g}·2·({0} - {1})/n"),
    ),
    "NllLossBackward0": Op(
        symbol="nll",
        does="takes the negative log-likelihood of the target classes in {0}",
        why="PyTorch keeps the input along with the targets",
        sends=("-{g}/n at each target class, 0 elsewhere",),
    ),
    # ***** losses and nn.functional (more) *****
    "BinaryCrossEntropyBackward0": Op(
        symbol="bce",
        does="takes the binary cross-entropy of the probabilities {0} against {1}",
        why="the gradient is ({0} - {1}) / ({0}·(1 - {0})), which needs both",
        sends=(
            "{g}·({0} - {1}) / ({0}·(1 - {0}))/n",
            "{g}·(log(1 - {0}) - log({0}))/n",
        ),
    ),
    "LogitBackward0": Op(
        symbol="logit",
        does="takes the logit log({0} / (1 - {0})) of the probabilities {0}",
        why="the derivative 1 / ({0}·(1 - {0})) needs {0}",
        sends=("{g} / ({0}·(1 - {0}))",),
    ),
    "BinaryCrossEntropyWithLogitsBackward0": Op(
        symbol="bce",
        does="takes the binary cross-entropy of sigmoid({0}) against {1}, straight from the logits",
        why="the gradient is σ({0}) - {1}, which needs both",
        sends=("{g}·(σ({0}) - {1})/n", "-{g}·{0}/n"),
    ),
    "SmoothL1LossBackward0": Op(
        symbol="smooth_l1",
        does="takes the smooth L1 loss between {0} and {1} (squared near 0, absolute further out)",
        why="the slope depends on how far apart {0} and {1} are",
        sends=("{g}·clamp(({0} - {1})/beta, -1, 1)/n", "-{g}·clamp(({0} - {1})/beta, -1, 1)/n"),
    ),
    "HuberLossBackward0": Op(
        symbol="huber",
        does="takes the Huber loss between {0} and {1} (squared near 0, delta-scaled further out)",
        why="the slope depends on how far apart {0} and {1} are",
        sends=("{g}·clamp({0} - {1}, -delta, delta)/n", "-{g}·clamp({0} - {1}, -delta, delta)/n"),
    ),
    "SoftMarginLossBackward0": Op(
        symbol="soft_margin",
        does="takes the soft margin loss log(1 + exp(-{1}·{0})) of {0} against targets ±1",
        why="the gradient -{1}·σ(-{1}·{0}) needs {0} (and the target it keeps)",
        sends=("-{g}·target·σ(-target·{0})/n",),
    ),
    "LeakyReluBackward0": Op(
        symbol="leaky_relu",
        does="applies leaky ReLU to {0} (negatives are scaled by a small slope)",
        why="the sign of {0} says which slope the gradient takes",
        sends=("{g} where {0} > 0, else {g}·negative_slope",),
    ),
    "LeakyReluBackward1": Op(
        symbol="leaky_relu_",
        does="applies leaky ReLU to {0} in place",
        why="the old values are overwritten, and the result has the same signs",
        sends=("{g} where result > 0, else {g}·negative_slope",),
        inplace="applies leaky ReLU to {0}",
    ),
    "EluBackward0": Op(
        symbol="elu",
        does="applies ELU to {0} (negatives curve smoothly towards -alpha)",
        why="below 0 the slope is alpha·exp({0}), which needs {0}",
        sends=("{g}·scale where {0} > 0, else {g}·scale·alpha·exp({0})",),
    ),
    "EluBackward1": Op(
        symbol="elu_",
        does="applies ELU to {0} in place",
        why="the old values are overwritten; the slope can be rebuilt from the result",
        sends=("{g}·scale where result > 0, else {g}·(result + alpha·scale)",),
        inplace="applies ELU to {0}",
    ),
    "GeluBackward0": Op(
        symbol="gelu",
        does="applies GELU to {0}: {0} times the normal distribution's cdf at {0}",
        why="the derivative Φ({0}) + {0}·φ({0}) needs {0}",
        sends=("{g}·(Φ({0}) + {0}·φ({0}))",),
    ),
    "SiluBackward0": Op(
        symbol="silu",
        does="applies SiLU to {0}: {0}·σ({0})",
        why="the derivative σ({0})·(1 + {0}·(1 - σ({0}))) needs {0}",
        sends=("{g}·σ({0})·(1 + {0}·(1 - σ({0})))",),
        inplace="applies SiLU to {0}",
    ),
    "SoftplusBackward0": Op(
        symbol="softplus",
        does="applies softplus to {0}: log(1 + exp(beta·{0}))/beta",
        why="the derivative σ(beta·{0}) needs {0}",
        sends=("{g}·σ(beta·{0})",),
    ),
    "HardtanhBackward0": Op(
        symbol="hardtanh",
        does="clamps {0} into [min_val, max_val] (relu6 clamps into [0, 6])",
        why="{0} says where it was inside the range, the only places the gradient passes",
        sends=("{g} where min_val < {0} < max_val, else 0",),
        inplace="clamps {0} into [min_val, max_val]",
    ),
    "LogSigmoidBackward0": Op(
        symbol="logσ",
        does="takes log(sigmoid({0})), computed without overflow",
        why="the derivative σ(-{0}) needs {0}",
        sends=("{g}·σ(-{0})",),
    ),
    "CeluBackward0": Op(
        symbol="celu",
        does="applies CELU to {0} (negatives curve towards -alpha, the slope continuous at 0)",
        why="below 0 the slope is exp({0}/alpha), which needs {0}",
        sends=("{g} where {0} > 0, else {g}·exp({0}/alpha)",),
    ),
    "CeluBackward1": Op(
        symbol="celu_",
        does="applies CELU to {0} in place",
        why="the old values are overwritten; the slope can be rebuilt from the result",
        sends=("{g} where result > 0, else {g}·(result/alpha + 1)",),
        inplace="applies CELU to {0}",
    ),
    "ThresholdBackward0": Op(
        symbol="threshold",
        does="keeps {0} where it is above the threshold and puts a fixed value elsewhere",
        why="{0} says where it was above the threshold, the only places the gradient passes",
        sends=("{g} where {0} > threshold, else 0",),
    ),
    "ThresholdBackward1": Op(
        symbol="threshold_",
        does="replaces {0} by a fixed value wherever it is not above the threshold, in place",
        why="PyTorch keeps a copy of the old {0}: it says where the gradient passes",
        sends=("{g} where {0} > threshold, else 0",),
        inplace="replaces {0} below the threshold",
    ),
    "SoftshrinkBackward0": Op(
        symbol="softshrink",
        does="moves {0} towards 0 by lambd, and zeroes it inside ±lambd",
        why="{0} says where it was outside ±lambd, the only places the gradient passes",
        sends=("{g} where |{0}| > lambd, else 0",),
    ),
    "HardshrinkBackward0": Op(
        symbol="hardshrink",
        does="zeroes {0} inside ±lambd and keeps it elsewhere",
        why="{0} says where it was outside ±lambd, the only places the gradient passes",
        sends=("{g} where |{0}| > lambd, else 0",),
    ),
    "MishBackward0": Op(
        symbol="mish",
        does="applies Mish to {0}: {0}·tanh(softplus({0}))",
        why="the derivative is written with {0}",
        sends=("{g}·(t + {0}·σ({0})·(1 - t²)), t = tanh(softplus({0}))",),
        inplace="applies Mish to {0}",
    ),
    "HardswishBackward0": Op(
        symbol="hardswish",
        does="applies hard swish to {0}: {0}·relu6({0} + 3)/6",
        why="{0} says which piece of the curve each element is on",
        sends=("0 up to -3, {g}·({0}/3 + 1/2) up to 3, {g} after",),
        inplace="applies hard swish to {0}",
    ),
    "HardsigmoidBackward0": Op(
        symbol="hardσ",
        does="applies the hard sigmoid to {0}: relu6({0} + 3)/6",
        why="{0} says where it was between -3 and 3, the only places the gradient passes",
        sends=("{g}/6 where -3 < {0} < 3, else 0",),
        inplace="applies the hard sigmoid to {0}",
    ),
    "GluBackward0": Op(
        symbol="glu",
        does="splits {0} in two along a dim and gates the first half by σ(second half)",
        why="both halves' gradients need both halves",
        sends=("{g}·σ(b) for the first half a, {g}·a·σ(b)·(1 - σ(b)) for the second half b",),
    ),
    "PreluKernelBackward0": Op(
        symbol="prelu",
        does="applies PReLU to {0}: negatives are scaled by the learned slope {1}",
        why="each input's gradient needs the other: {0}'s sign and slope, {1}'s values",
        sends=("{g} where {0} > 0, else {g}·{1}", "{g}·{0} where {0} ≤ 0, summed per channel"),
    ),
    "ConstantPadNdBackward0": Op(
        symbol="pad",
        does="puts a border of one value around {0} (negative widths crop it)",
        why_not="it only needs the widths, to cut the border off the gradient",
        sends=("the middle of {g}, without the border",),
    ),
    "SafeSoftmaxBackward0": Op(
        symbol="softmax",
        does="applies softmax to {0}, giving 0 on rows masked out entirely",
        why="the softmax's derivative is written with its output",
        sends=("result·({g} - sum({g}·result))",),
    ),
    "ScaledDotProductFlashAttentionForCpuBackward0": Op(
        symbol="attention",
        does="computes attention: softmax({0} @ {1}ᵀ·scale) @ {2}, in one fused kernel",
        why="each input's gradient needs the attention weights, rebuilt from query and key",
        sends=("dS @ {1}·scale", "dSᵀ @ {0}·scale", "Pᵀ @ {g}"),
    ),
    "EmbeddingBackward0": Op(
        symbol="embed",
        does="picks rows of the table {0} by index",
        why_not="it keeps the indices, which say where each row's gradient goes",
        sends=("{g} added into each picked row, 0 in the others",),
    ),
    "NormBackward1": Op(
        symbol="‖‖",
        does="takes the p-norm of {0} along a dim (pairwise_distance's last step)",
        why="the norm's derivative needs both {0} and the norm itself",
        sends=("{g}·{0}/‖{0}‖ (for p = 2)",),
    ),
    "MulBackward1": Op(
        symbol="×",
        does="multiplies {0} by {1}",
        why_not="the factor is a plain number, which the node keeps as it is",
        sends=("{g}·{1}",),
        number="a number",
    ),
    "AddBackward1": Op(
        symbol="+",
        does="adds {1} to {0}",
        why_not="adding a number passes the gradient through unchanged",
        sends=("{g}",),
        number="a number",
    ),
    "SubBackward1": Op(
        symbol="−",
        does="subtracts {1} from {0}",
        why_not="subtracting a number passes the gradient through unchanged",
        sends=("{g}",),
        number="a number",
    ),
    "DivBackward1": Op(
        symbol="÷",
        does="divides {0} by {1}",
        why_not="the divisor is a plain number, which the node keeps as it is",
        sends=("{g}/{1}",),
        number="a number",
    ),
    # ***** normalisation layers *****
    "NativeLayerNormBackward0": Op(
        symbol="layernorm",
        does="normalises each sample of {0} over its last dims, then scales by {1} and shifts "
        "by {2}",
        why="the gradient runs back through the sample's own mean and spread, so it needs {0} "
        "and {1} (PyTorch also keeps the mean and 1/std it found)",
        sends=(
            "rstd·(g - mean(g) - x̂·mean(g·x̂)) with g = {g}·{1}",
            "{g}·x̂ summed over the batch",
            "{g} summed over the batch",
        ),
    ),
    "NativeBatchNormBackward0": Op(
        symbol="batchnorm",
        does="normalises each feature of {0} over the batch, then scales by {1} and shifts by {2}",
        why="in training the batch's mean and spread depend on every sample, so the gradient "
        "needs {0} and {1} (PyTorch also keeps the batch's mean and 1/std)",
        sends=(
            "training: invstd·(g - mean(g) - x̂·mean(g·x̂)) with g = {g}·{1}; eval: {g}·{1}·invstd",
            "{g}·x̂ summed over the batch",
            "{g} summed over the batch",
        ),
    ),
    # ***** in-place only *****
    "ZeroBackward0": Op(
        symbol="zero_",
        does="fills {0} with zeros",
        why_not="the old values no longer matter, so their gradient is 0",
        sends=("0",),
        inplace="fills {0} with zeros",
    ),
    "FillBackward2": Op(
        symbol="fill_",
        does="fills {0} with one number",
        why_not="the old values no longer matter, so their gradient is 0",
        sends=("0",),
        inplace="fills {0} with one number",
    ),
    "CopyBackwards": Op(
        symbol="copy_",
        does="copies {1} into {0}",
        why_not="the copy passes the gradient to the source and 0 to the old values",
        sends=("0", "{g}"),
        inplace="copies {1} into {0}",
    ),
    # ***** backwards recorded as ops of their own (create_graph=True) *****
    "TanhBackwardBackward0": Op(
        symbol="tanh′",
        does="computes tanh's backward: {0}·(1 - {1}²)",
        why="differentiating it again needs both the gradient it scaled and tanh's result",
        sends=("{g}·(1 - {1}²)", "-2·{g}·{0}·{1}"),
    ),
    "SigmoidBackwardBackward0": Op(
        symbol="σ′",
        does="computes the sigmoid's backward: {0}·(1 - {1})·{1}",
        why="differentiating it again needs both the gradient it scaled and the sigmoid's result",
        sends=("{g}·(1 - {1})·{1}", "{g}·{0}·(1 - 2·{1})"),
    ),
    "ThresholdBackwardBackward0": Op(
        symbol="relu′",
        does="computes ReLU's backward: {0} where {1} > 0, else 0",
        why="{1} says where the gradient passes, again",
        sends=("{g} where {1} > 0, else 0", "0"),
    ),
    "SelectBackwardBackward0": Op(
        symbol="[i]′",
        does="computes select's backward: zeros shaped like the input, with {0} at the index",
        sends=("{g} at the selected index",),
    ),
    "SliceBackwardBackward0": Op(
        symbol="[:]′",
        does="computes slice's backward: zeros shaped like the input, with {0} in the range",
        sends=("{g} in the sliced range",),
    ),
    "SoftmaxBackwardDataBackward0": Op(
        symbol="softmax′",
        does="computes softmax's backward: {1}·({0} - Σ{0}·{1})",
        why="differentiating it again needs the gradient it reshaped and softmax's result",
        sends=("softmax's backward of {g}", "{0}·{g} - Σ({1}·{0})·{g} - {0}·Σ({1}·{g})"),
    ),
    "LogSoftmaxBackwardDataBackward0": Op(
        symbol="log_softmax′",
        does="computes log_softmax's backward: {0} - exp({1})·Σ{0}",
        why="differentiating it again needs the gradient it reshaped and log_softmax's result",
        sends=("{g} - Σ({g}·exp({1}))", "-Σ{0}·exp({1})·{g}"),
    ),
    "MseLossBackwardBackward0": Op(
        symbol="mse′",
        does="computes mse_loss's backward: 2·({1} - {2})·{0}, divided by n for the mean",
        why="differentiating it again needs the incoming gradient, the input and the target",
        sends=("{g}·2·({1} - {2})/n", "2·{g}·{0}/n", "-2·{g}·{0}/n"),
    ),
    "SmoothL1LossBackwardBackward0": Op(
        symbol="smooth_l1′",
        does="computes smooth_l1_loss's backward: {0}·clamp(({1} - {2})/beta, -1, 1) (/n: mean)",
        why="differentiating it again needs the incoming gradient, the input and the target",
        sends=(
            "{g}·clamp(({1} - {2})/beta, -1, 1)/n",
            "{g}·{0}/beta/n where |{1} - {2}| < beta, else 0",
            "-{g}·{0}/beta/n where |{1} - {2}| < beta, else 0",
        ),
    ),
    "HuberLossBackwardBackward0": Op(
        symbol="huber′",
        does="computes huber_loss's backward: {0}·clamp({1} - {2}, -delta, delta) (/n: mean)",
        why="differentiating it again needs the incoming gradient, the input and the target",
        sends=(
            "{g}·clamp({1} - {2}, -delta, delta)/n",
            "{g}·{0}/n where |{1} - {2}| < delta, else 0",
            "-{g}·{0}/n where |{1} - {2}| < delta, else 0",
        ),
    ),
    "BinaryCrossEntropyBackwardBackward0": Op(
        symbol="bce′",
        does="computes binary_cross_entropy's backward: {0}·({1} - {2}) / ({1}·(1 - {1})), over n",
        why="differentiating it again needs the incoming gradient, the input and the target",
        sends=(
            "{g}·({1} - {2}) / ({1}·(1 - {1}))/n",
            "{g}·{0}·({1}² - 2·{1}·{2} + {2}) / ({1}·(1 - {1}))²/n",
            "-{g}·{0} / ({1}·(1 - {1}))/n",
        ),
    ),
    "GluBackwardBackward0": Op(
        symbol="glu′",
        does="computes glu's backward: {0}·σ(b) for the first half a of {1}, {0}·a·σ′(b) for b",
        why="differentiating it again needs the incoming gradient and both halves of glu's input",
        sends=(
            "the backward of {g}, the halves' parts added",
            "{g}_b·{0}·σ′(b) for a; {g}_b·a·{0}·σ″(b) + {g}_a·{0}·σ′(b) for b",
        ),
    ),
    "PreluKernelBackwardBackward0": Op(
        symbol="prelu′",
        does="computes PReLU's backward: {0} where {1} > 0, else {0}·{2}; and {0}·{1} for {2}",
        why="differentiating it again needs the incoming gradient, the input and the slope",
        sends=(
            "{g}₁ where {1} ≥ 0, else {g}₁·{2} + {g}₂·{1}",
            "{0}·{g}₂ where {1} < 0, else 0",
            "{0}·{g}₁ where {1} < 0, else 0",
        ),
    ),
    "LeakyReluBackwardBackward0": Op(
        symbol="leaky_relu′",
        does="computes leaky ReLU's backward: {0} where {1} > 0, else {0}·negative_slope",
        why="the sign of {1} still says which slope the gradient takes",
        sends=("{g} where {1} > 0, else {g}·negative_slope", "0"),
    ),
    "HardtanhBackwardBackward0": Op(
        symbol="hardtanh′",
        does="computes hardtanh's backward: {0} where min_val < {1} < max_val, else 0",
        why="{1} still says where the gradient passes",
        sends=("{g} where min_val < {1} < max_val, else 0", "0"),
    ),
    "HardswishBackwardBackward0": Op(
        symbol="hardswish′",
        does="computes hard swish's backward: 0 up to -3, {0}·({1}/3 + 1/2) up to 3, {0} after",
        why="differentiating it again needs the gradient it scaled and hard swish's input",
        sends=(
            "0 up to -3, {g}·({1}/3 + 1/2) up to 3, {g} after",
            "{g}·{0}/3 where -3 < {1} < 3, else 0",
        ),
    ),
    "EluBackwardBackward0": Op(
        symbol="elu′",
        does="computes ELU's backward: {0}·scale where {1} > 0, else {0}·scale·alpha·exp({1})",
        why="differentiating it again needs the gradient it scaled and ELU's input",
        sends=(
            "{g}·scale where {1} > 0, else {g}·scale·alpha·exp({1})",
            "0 where {1} > 0, else {g}·{0}·scale·alpha·exp({1})",
        ),
    ),
    "GeluBackwardBackward0": Op(
        symbol="gelu′",
        does="computes GELU's backward: {0}·(Φ({1}) + {1}·φ({1}))",
        why="differentiating it again needs the gradient it scaled and GELU's input",
        sends=("{g}·(Φ({1}) + {1}·φ({1}))", "{g}·{0}·φ({1})·(2 - {1}²)"),
    ),
    "SoftplusBackwardBackward0": Op(
        symbol="softplus′",
        does="computes softplus's backward: {0}·σ(beta·{1})",
        why="differentiating it again needs the gradient it scaled and softplus's input",
        sends=("{g}·σ(beta·{1})", "{g}·{0}·beta·σ(beta·{1})·(1 - σ(beta·{1}))"),
    ),
    "SoftshrinkBackwardBackward0": Op(
        symbol="softshrink′",
        does="computes softshrink's backward: {0} where |{1}| > lambd, else 0",
        why="{1} still says where the gradient passes",
        sends=("{g} where |{1}| > lambd, else 0", "0"),
    ),
    "HardshrinkBackwardBackward0": Op(
        symbol="hardshrink′",
        does="computes hardshrink's backward: {0} where |{1}| > lambd, else 0",
        why="{1} still says where the gradient passes",
        sends=("{g} where |{1}| > lambd, else 0", "0"),
    ),
    "IndexPutImplBackward0": Op(
        symbol="[idx]′",
        does="computes indexing's backward: {0} (zeros) with {1} added at the indices",
        sends=("{g}", "{g} at the indices"),
    ),
    "NllLossBackwardBackward0": Op(
        symbol="nll′",
        does="computes nll_loss's backward: -{0} at each target's class, 0 elsewhere",
        why="its backward is nll_loss again, which only needs the targets it keeps",
        sends=("nll_loss({g}, target)", "0"),
    ),
    # ***** the leaf end *****
    "AccumulateGrad": Op(
        symbol="acc",
        does="adds an arriving gradient into a leaf's .grad",
        why_not="it holds the leaf itself, not a copy",
        sends=("{g}",),
    ),
}

# In-place changes that are not operations PyTorch records.
UNRECORDED_INPLACE = {
    "setitem": ("[ ]=", "writes into {0}"),
    "optimizer.step": ("step", "updates {0}"),
}

_PREFIX = "torch::autograd::"
_SLOT = re.compile(r"\{(\d+|g|i)\}")
_CUSTOM = re.compile(r"[A-Za-z_]\w*Backward")  # PyTorch's own nodes end in a digit


def plain(name: str) -> str:
    """PyTorch's hand-written nodes are named torch::autograd::CopyBackwards; drop the path."""
    return name[len(_PREFIX) :] if name.startswith(_PREFIX) else name


def lookup(name: str) -> Op:
    """The entry for a grad_fn name; an unknown one (a newer engine) still reads sensibly."""
    op = OPS.get(plain(name))
    if op is not None:
        return op
    if is_custom(name):
        return custom_function(name.removesuffix("Backward"))
    return Op(plain(name), f"applies {plain(name)} to {{0}}", ("?",), why="its backward needs them")


def is_custom(name: str) -> bool:
    """A program's own torch.autograd.Function's node (<Name>Backward, no digit)."""
    return bool(_CUSTOM.fullmatch(name))


def custom_function(function: str) -> Op:
    """A program's own torch.autograd.Function: its node is <Name>Backward, with no digit."""
    return Op(
        symbol="ƒ",
        does=f"runs the custom autograd Function {function} on {{0}}",
        sends=(f"{function}.backward({{g}})",),
        why=f"{function}.forward kept them with ctx.save_for_backward, for its backward",
        why_not=f"{function}.forward saved nothing for its backward",
    )


def symbol(name: str) -> str:
    if name in UNRECORDED_INPLACE:
        return UNRECORDED_INPLACE[name][0]
    return lookup(name).symbol


def fill(template: str, names: list[str], grad: str = "grad", slot: int = 0) -> str:
    """A template with the inputs' names, the arriving gradient and a position filled in."""

    def one(match: re.Match) -> str:
        key = match.group(1)
        if key == "g":
            return grad
        if key == "i":
            return str(slot)
        index = int(key)
        return names[index] if index < len(names) else "it"

    return _SLOT.sub(one, template)


def sends(name: str, slot: int) -> str:
    """What the backward of `name` sends to input `slot`, as a template."""
    rules = lookup(name).sends
    return rules[slot] if slot < len(rules) else rules[-1]
