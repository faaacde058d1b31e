"""The seed articles' examples, run on the engine, print what the articles say PyTorch prints.

The snippets are copied verbatim from the articles the project grew from; the expected output
is the article's own claim (a comment, or the calculus it walks through), not a recording.
"""

import contextlib
import io
import textwrap

import pytest

from engine.snippet import run_snippet


def printed(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_snippet(textwrap.dedent(code))
    return out.getvalue()


def test_tracing_a_backward_pass_adds_both_paths_into_a():
    # "The two paths into a add up: 1 + 4 = 5 ... dd/da = b + 1 = 5 and dd/db = a = 3"
    assert (
        printed("""\
        import torch

        a = torch.tensor(3.0, requires_grad=True)
        b = torch.tensor(4.0, requires_grad=True)
        c = a * b
        d = c + a
        d.backward()
        print(a.grad.item(), b.grad.item())
    """)
        == "5.0 3.0\n"
    )


def test_elementwise_product_gradients_are_the_other_factor():
    # the article's comments: "# Output: tensor([4., 5., 6.])" and "# Output: tensor([1., 2., 3.])"
    assert (
        printed("""\
        import torch

        # Define input tensors
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)

        # Perform operations
        z = x * y  # Element-wise multiplication
        loss = z.sum()  # Sum of elements

        # Backpropagation
        loss.backward()

        # Display gradients
        print(x.grad)  # Output: tensor([4., 5., 6.])
        print(y.grad)  # Output: tensor([1., 2., 3.])
    """)
        == "tensor([4., 5., 6.])\ntensor([1., 2., 3.])\n"
    )


DYNAMIC_MODEL = """\
    import torch

    # Initialize weights with gradient tracking enabled
    weights = torch.randn(5, requires_grad=True)

    def dynamic_model(x, threshold=0.5):
        # The graph is built dynamically based on the values of x
        result = 0
        for val in x:
            if val > threshold:
                # This operation is added to the graph only if the condition is met
                result += val * weights[0]
            else:
                result += val * weights[1]
        return result

    # Input tensor (can be any length)
    input_data = torch.tensor([0.1, 0.8, 0.2, 0.9])

    # Forward pass: The graph is constructed here
    loss = dynamic_model(input_data)

    # Backward pass: Traverses the specific graph created for this input
    loss.backward()

    print(f"Gradients for weights: {weights.grad}")
"""


def test_a_data_dependent_graph_sends_each_input_to_the_weight_it_used():
    # 0.8 and 0.9 pass the threshold (weights[0]), 0.1 and 0.2 do not (weights[1]);
    # the article asks only that weights.grad is filled in: these are the values it implies
    assert printed(DYNAMIC_MODEL) == (
        "Gradients for weights: tensor([1.7000, 0.3000, 0.0000, 0.0000, 0.0000])\n"
    )


def test_no_grad_builds_no_graph_so_backward_fails():
    # "with torch.no_grad(): ... prediction.backward() would raise an error here"
    code = textwrap.dedent(DYNAMIC_MODEL) + textwrap.dedent("""\
        with torch.no_grad():
            # No graph is constructed here
            prediction = dynamic_model(input_data)
        print(prediction.requires_grad, prediction.grad_fn)
        prediction.backward()
    """)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(RuntimeError) as error:
        run_snippet(code)
    assert out.getvalue().endswith("False None\n")
    assert str(error.value) == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )
