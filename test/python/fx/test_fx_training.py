"""Training through torch.compile(backend=aot_backend): SGD steps of a
small ResNet with batch norm and a small BERT encoder on the cmodel track
eager PyTorch on the CPU (per-step loss within 1e-4 relative, final
parameters cos >= 0.9999, batch-norm buffers allclose), with one forward
and one backward graph compiled for all steps; what falls back to the CPU
is named in the log. The per-op gradient tests run the backward
converters through the registry conformance tests (test_fx_conformance)."""
import copy

import pytest
import torch

from tpuc.dynamo import aot_backend, backend
from tpuc.examples import models, train

from conftest import cosine

STEPS = 10


def _check(result, tpuc_log, loss_rtol=1e-4):
    for i, s in enumerate(result.steps):
        print(f"step {i}: loss {s.loss:.7f} eager {s.eager_loss:.7f} "
              f"rel {s.relative_error:.2e} cycles {s.cycles}")
    for i, s in enumerate(result.steps):
        assert s.relative_error <= loss_rtol, (i, s)
        assert s.cycles > 0
    assert result.graph_compiles == {"forward": 1, "backward": 1}
    for (name, p), (_, q) in zip(result.model.named_parameters(),
                                 result.eager_model.named_parameters()):
        # Parameters whose gradient is zero in exact arithmetic (BERT's key
        # bias: softmax ignores it) stay at rounding noise in both runs.
        if q.abs().max() > 1e-6:
            assert cosine(p.detach(), q.detach()) >= 0.9999, name
        else:
            assert p.abs().max() <= 1e-6, name
    for (name, b), (_, e) in zip(result.model.named_buffers(),
                                 result.eager_model.named_buffers()):
        torch.testing.assert_close(b, e, rtol=1e-4, atol=1e-5, msg=name)
    lines = [r.getMessage() for r in tpuc_log.records if r.name == "tpuc.dynamo"]
    assert any(line.startswith("tpuc: forward_") for line in lines)
    assert any(line.startswith("tpuc: backward_") for line in lines)
    return lines


@pytest.mark.slow
def test_small_resnet_trains_like_eager(tpuc_log):
    """Ten free-running steps at the default lr (0.001, below the stability
    edge of gradient descent for this model; see train.default_lr)."""
    lines = _check(train.train("resnet-small", STEPS), tpuc_log)
    forward = next(line for line in lines if line.startswith("tpuc: forward_"))
    backward = next(line for line in lines if line.startswith("tpuc: backward_"))
    # Max pooling saves no indices; its backward and the strided
    # convolutions' input gradients run on the chip.
    assert "max_pool" not in forward and "max_pool" not in backward
    assert "convolution_backward" not in backward
    # The ReLU backward masks (x <= 0, where) run on the chip.
    assert "aten.le.Scalar" not in backward
    assert "aten.where.self (argument 1 is torch.int64" in backward  # only NLL's
    # NLL's gather and the scatter of its gradient (onto a folded full_like)
    # run on the chip; the int64 label bookkeeping stays on the CPU.
    assert "gather" not in forward
    assert "scatter" not in backward and "full_like" not in backward


@pytest.mark.slow
def test_small_bert_trains_like_eager(tpuc_log):
    pytest.importorskip("transformers")
    lines = _check(train.train("bert", STEPS), tpuc_log)
    forward = next(line for line in lines if line.startswith("tpuc: forward_"))
    backward = next(line for line in lines if line.startswith("tpuc: backward_"))
    # Layer norm, with the mean and rstd the backward reads, runs on the chip.
    assert "native_layer_norm" not in forward
    # The embeddings' backward (scatter-add) runs on the chip.
    assert "index_put" not in backward


@pytest.mark.slow
def test_resnet50_training_step_is_as_accurate_as_eager_float32(tpuc_log):
    """One step of torchvision's ResNet-50 (batch 16 of 32x32) on tpu_edge:
    both graphs compile (no whole-graph fallback) and the loss matches eager.
    Its gradients are ill-conditioned (batch norm over 16 to 64 values in
    the last stages): eager float32 itself is only 0.99986 cos from float64
    on some, so the chip's gradients are held to float64 with at most three
    times eager float32's largest error (measured: 4.3e-5 against 1.4e-4)."""
    torch.manual_seed(0)
    net = train.MODELS["resnet50"]().train()
    eager, exact = copy.deepcopy(net), copy.deepcopy(net).double()
    x, y = train.batches("resnet50", 1, 16, 32, 0)[0]
    loss = torch.compile(models.WithLoss(net), backend=aot_backend, dynamic=False)(x, y)
    want = models.WithLoss(eager)(x, y)
    for value in (loss, want, models.WithLoss(exact)(x.double(), y)):
        value.backward()
    assert abs(loss.item() / want.item() - 1) <= 1e-4
    chip_error, eager_error = {}, {}
    for (name, p), (_, q), (_, r) in zip(net.named_parameters(), eager.named_parameters(),
                                         exact.named_parameters()):
        chip_error[name], eager_error[name] = 1 - cosine(p.grad, r.grad), 1 - cosine(q.grad, r.grad)
    worst = max(chip_error, key=chip_error.get)
    assert chip_error[worst] <= 3 * max(eager_error.values()), (worst, chip_error[worst])
    for (name, b), (_, e) in zip(net.named_buffers(), eager.named_buffers()):
        torch.testing.assert_close(b, e, rtol=1e-4, atol=1e-5, msg=name)
    assert "compiling failed" not in tpuc_log.text
    assert "tpuc: backward_" in tpuc_log.text


class TwoConvs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 4, 3, padding=1, bias=False)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x))).square().mean()


def test_frozen_layer_gives_none_grad_and_one_compile_per_graph():
    """A frozen conv (requires_grad=False): its gradients are None in the
    graph's outputs, the others match eager; parameters are runtime inputs,
    so updating them between steps compiles nothing new."""
    model, eager = TwoConvs(), TwoConvs()
    for m in (model, eager):
        m.a.weight.requires_grad_(False)
    before = dict(backend.GRAPH_COMPILES)
    compiled = torch.compile(model, backend=aot_backend, dynamic=False)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    eager_opt = torch.optim.SGD([p for p in eager.parameters() if p.requires_grad], lr=0.1)
    g = torch.Generator().manual_seed(3)
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8, generator=g)
        loss, want = compiled(x), eager(x)
        loss.backward()
        want.backward()
        torch.testing.assert_close(loss, want, rtol=1e-4, atol=1e-6)
        assert model.a.weight.grad is None
        for p, q in zip(model.parameters(), eager.parameters()):
            if q.grad is not None:
                torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6)
        for o in (opt, eager_opt):
            o.step()
            o.zero_grad()
    compiled_now = {k: v - before.get(k, 0) for k, v in backend.GRAPH_COMPILES.items()}
    assert compiled_now.get("forward") == 1 and compiled_now.get("backward") == 1


class ClampGrad(torch.autograd.Function):
    """Identity forward; the backward clips the gradient to [-1e-4, 1e-4]
    (not what autograd would derive, so a wrong backward shows)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.clamp(-1e-4, 1e-4)


class WithCustomFunction(TwoConvs):
    def forward(self, x):
        return self.b(ClampGrad.apply(torch.tanh(self.a(x)))).square().mean()


def _grads(model):
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _assert_same_grads(model, eager):
    got, want = _grads(model), _grads(eager)
    assert got.keys() == want.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-4, atol=1e-6, msg=name)


def _one_step_like_eager(model, eager, x):
    """The compiled model's loss and gradients equal eager's for input x."""
    loss, want = torch.compile(model, backend=aot_backend, dynamic=False)(x), eager(x)
    loss.backward()
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-4, atol=1e-6)
    _assert_same_grads(model, eager)


def test_custom_autograd_function_uses_its_backward(tpuc_log):
    """The custom backward (a clamp of the gradient) is traced into the
    backward graph and compiled, or the graph falls back with a log line;
    either way the gradients are the custom ones."""
    model, eager = WithCustomFunction(), WithCustomFunction()
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(5))
    _one_step_like_eager(model, eager, x)
    # The clamp bites: the custom gradient differs from the autograd one.
    plain = TwoConvs()
    plain(x).backward()
    assert not torch.allclose(plain.a.weight.grad, eager.a.weight.grad, rtol=1e-2)
    lines = [r.getMessage() for r in tpuc_log.records if r.name == "tpuc.dynamo"]
    assert any(line.startswith("tpuc: backward_") for line in lines), lines


def test_gradient_accumulation_over_two_steps():
    """Two backward passes without zero_grad add into .grad as in eager;
    the second micro-batch reuses both compiled graphs."""
    model, eager = TwoConvs(), TwoConvs()
    before = dict(backend.GRAPH_COMPILES)
    compiled = torch.compile(model, backend=aot_backend, dynamic=False)
    g = torch.Generator().manual_seed(6)
    for _ in range(2):
        x = torch.randn(2, 3, 8, 8, generator=g)
        compiled(x).backward()
        eager(x).backward()
    _assert_same_grads(model, eager)
    for o in (torch.optim.SGD(model.parameters(), lr=0.1),
              torch.optim.SGD(eager.parameters(), lr=0.1)):
        o.step()
    for p, q in zip(model.parameters(), eager.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-7)
    compiled_now = {k: v - before.get(k, 0) for k, v in backend.GRAPH_COMPILES.items()
                    if v != before.get(k, 0)}
    assert compiled_now == {"forward": 1, "backward": 1}


class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean((2, 3)))


def test_eval_after_training_uses_the_trained_weights_and_running_stats(tpuc_log):
    """Training steps, then model.eval(): the inference graph (its own
    compile) binds the current weights and running statistics; after one
    more training step, eval rebinds them (logged) instead of serving stale
    constants."""
    model = ConvBN()
    eager = ConvBN()
    compiled = torch.compile(model, backend=aot_backend, dynamic=False)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, eager)]
    g = torch.Generator().manual_seed(8)
    x_eval = torch.randn(4, 3, 8, 8, generator=g)

    def train_step():
        x, target = torch.randn(4, 3, 8, 8, generator=g), torch.randn(4, 4, generator=g)
        for m, o, run in ((model, opts[0], compiled), (eager, opts[1], eager)):
            m.train()
            torch.nn.functional.mse_loss(run(x), target).backward()
            o.step()
            o.zero_grad()

    def check_eval():
        model.eval()
        eager.eval()
        with torch.no_grad():
            torch.testing.assert_close(compiled(x_eval), eager(x_eval), rtol=1e-4, atol=1e-5)

    for _ in range(2):
        train_step()
    check_eval()
    train_step()
    check_eval()
    for b, e in zip(model.buffers(), eager.buffers()):
        torch.testing.assert_close(b, e, rtol=1e-4, atol=1e-6)
    text = "\n".join(r.getMessage() for r in tpuc_log.records if r.name == "tpuc.dynamo")
    assert "tpuc: inference_" in text
    assert "parameters changed, rebinding" in text


class PoolModel(torch.nn.Module):
    def __init__(self, pool):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool = pool

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x))).square().mean()


@pytest.mark.parametrize("pool,on_chip", [
    (torch.nn.MaxPool2d(3, 2, 1), True),
    (torch.nn.MaxPool2d(2, 2, ceil_mode=True), False)])
def test_max_pool_backward_without_indices(pool, on_chip, tpuc_log):
    """The max-pool backward recomputes the maxima instead of reading saved
    indices: on the chip, or (ceil_mode) on the CPU through ATen, named in
    the log; the gradients are eager's either way (ReLU zeros make ties)."""
    x = torch.randn(2, 3, 9, 9, generator=torch.Generator().manual_seed(9))
    _one_step_like_eager(PoolModel(pool), PoolModel(pool), x)
    backward = next(r.getMessage() for r in tpuc_log.records
                    if r.getMessage().startswith("tpuc: backward_"))
    assert "max_pool2d_with_indices_backward" not in backward
    assert ("tpuc.max_pool2d_backward.default (ceil_mode)" in backward) != on_chip
