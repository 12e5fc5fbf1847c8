"""LSTM, GRU and RNN, unrolled over the (static) sequence at import.

The input projection of every time step is one MatMul (with both biases
folded in where ONNX adds them together); each step then adds the
recurrent MatMul of the previous hidden state, slices the gates and applies
the default activations with Top's elementwise ops. Both directions,
layouts 0 and 1, initial states, and the Y / Y_h / Y_c outputs follow the
ONNX operator definitions.
"""
from __future__ import annotations

import numpy as np

from .onnx_ops import _input, _str, attrs, converter

# Gate counts and the default activations ONNX defines.
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "RNN": ["Tanh"]}


class _Cell:
    """One direction of one recurrent node: its weights and its step."""

    def __init__(self, imp, node, d, hidden, a):
        self.imp, self.op, self.h = imp, node.op_type, hidden
        g = _GATES[self.op]
        self.prefix = f"{node.name or next(o for o in node.output if o)}_d{d}"
        w = imp.require_const(node.input[1], f"{self.op} W")[d]          # [g*h, in]
        r = imp.require_const(node.input[2], f"{self.op} R")[d]          # [g*h, h]
        b = (imp.require_const(node.input[3], f"{self.op} B")[d] if _input(node, 3)
             else np.zeros(2 * g * hidden, np.float32))
        wb, rb = b[:g * hidden], b[g * hidden:]
        self.w_t = imp.weight(f"{self.prefix}_W_T", w.T)
        if self.op == "GRU":
            # The candidate gate's recurrent bias stays with its MatMul: ONNX
            # applies the reset gate to it.
            self.linear_before_reset = bool(a.get("linear_before_reset", 0))
            x_bias = np.concatenate([wb[:2 * hidden] + rb[:2 * hidden], wb[2 * hidden:]])
            self.rb_h = imp.weight(f"{self.prefix}_Rb_h", rb[2 * hidden:])
            if self.linear_before_reset:
                self.r_t = imp.weight(f"{self.prefix}_R_T", r.T)
                self.r_bias = imp.weight(f"{self.prefix}_Rb", np.concatenate(
                    [np.zeros(2 * hidden, np.float32), rb[2 * hidden:]]))
            else:
                self.r_zr = imp.weight(f"{self.prefix}_R_zr_T", r[:2 * hidden].T)
                self.r_h = imp.weight(f"{self.prefix}_R_h_T", r[2 * hidden:].T)
        else:
            x_bias = wb + rb
            self.r_t = imp.weight(f"{self.prefix}_R_T", r.T)
        self.x_bias = imp.weight(f"{self.prefix}_B", x_bias)

    def _gate(self, name, x, i, count=1):
        return self.imp.slice(name, x, starts=[i * self.h], ends=[(i + count) * self.h],
                              axes=[1], steps=[1])

    def step(self, t, xw, h_prev, c_prev):
        """One time step on xw [batch, g*h], the input projection with its
        biases; h_prev / c_prev are None for zero initial states. Returns
        the new (h, c)."""
        imp, p = self.imp, f"{self.prefix}_t{t}"
        sig = lambda n, v: imp.unary("sigmoid", n, v)  # noqa: E731
        tanh = lambda n, v: imp.unary("tanh", n, v)  # noqa: E731
        mul = lambda n, a, b: imp.binary("mul", n, a, b)  # noqa: E731
        add = lambda n, a, b: imp.binary("add", n, a, b)  # noqa: E731
        if self.op == "GRU":
            if h_prev is None:
                zr = self._gate(f"{p}_zr", xw, 0, 2)
            elif self.linear_before_reset:
                hr = imp.matmul(f"{p}_hR", h_prev, self.r_t, self.r_bias)
                zr = add(f"{p}_zr", self._gate(f"{p}_xzr", xw, 0, 2),
                         self._gate(f"{p}_hzr", hr, 0, 2))
            else:
                zr = add(f"{p}_zr", self._gate(f"{p}_xzr", xw, 0, 2),
                         imp.matmul(f"{p}_hzr", h_prev, self.r_zr))
            z = sig(f"{p}_z", self._gate(f"{p}_zs", zr, 0))
            r = sig(f"{p}_r", self._gate(f"{p}_rs", zr, 1))
            if h_prev is None:  # the recurrent term is Rb_h, gated or not
                rec = mul(f"{p}_rh", r, self.rb_h) if self.linear_before_reset else self.rb_h
            elif self.linear_before_reset:
                rec = mul(f"{p}_rh", r, self._gate(f"{p}_hh", hr, 2))
            else:
                rec = imp.matmul(f"{p}_rhR", mul(f"{p}_rh", r, h_prev), self.r_h, self.rb_h)
            n = tanh(f"{p}_n", add(f"{p}_nin", self._gate(f"{p}_xh", xw, 2), rec))
            # H = (1 - z) * n + z * H_prev
            one_minus_z = imp.binary("sub", f"{p}_1mz", imp.scalar(f"{p}_one", 1.0), z)
            h = mul(f"{p}_zn", one_minus_z, n)
            if h_prev is not None:
                h = add(f"{p}_h", h, mul(f"{p}_zh", z, h_prev))
            return h, None
        pre = xw if h_prev is None else add(
            f"{p}_pre", xw, imp.matmul(f"{p}_hR", h_prev, self.r_t))
        if self.op == "RNN":
            return tanh(f"{p}_h", pre), None
        # LSTM gates in ONNX order i, o, f, c
        i = sig(f"{p}_i", self._gate(f"{p}_is", pre, 0))
        o = sig(f"{p}_o", self._gate(f"{p}_os", pre, 1))
        f = sig(f"{p}_f", self._gate(f"{p}_fs", pre, 2))
        g = tanh(f"{p}_g", self._gate(f"{p}_gs", pre, 3))
        c = mul(f"{p}_ig", i, g)
        if c_prev is not None:
            c = add(f"{p}_c", mul(f"{p}_fc", f, c_prev), c)
        return mul(f"{p}_h", o, tanh(f"{p}_tc", c)), c


@converter("LSTM", "GRU", "RNN")
def recurrent(imp, node):
    a = attrs(node)
    op = node.op_type
    acts = [_str(s) for s in a.get("activations", [])]
    ndir = 2 if _str(a.get("direction", "forward")) == "bidirectional" else 1
    if acts and [s.lower() for s in acts] != [s.lower() for s in _DEFAULT_ACTS[op] * ndir]:
        raise imp.fail(f"activations {acts} are not supported (the defaults are)")
    if "clip" in a:
        raise imp.fail("clip is not supported")
    if a.get("input_forget", 0):
        raise imp.fail("input_forget=1 is not supported")
    if op == "LSTM" and _input(node, 7):
        p = imp.const(node.input[7])
        if p is None or np.any(p):
            raise imp.fail("peephole weights P are not supported")
    direction = _str(a.get("direction", "forward"))
    if direction not in ("forward", "reverse", "bidirectional"):
        raise imp.fail(f"direction '{direction}' is not supported")
    layout = a.get("layout", 0)
    x_shape = imp.shape(node.input[0])
    seq, batch = (x_shape[0], x_shape[1]) if layout == 0 else (x_shape[1], x_shape[0])
    hidden = a.get("hidden_size") or imp.shape(node.input[2])[-1]
    if _input(node, 4):
        lens = imp.const(node.input[4])
        if lens is None or np.any(lens != seq):
            raise imp.fail("sequence_lens other than the full sequence are not supported")
    name = node.name or next(o for o in node.output if o)
    x = imp.value(node.input[0])
    if layout == 1:
        x = imp.permute(f"{name}_x_seq_first", x, [1, 0, 2])

    def initial(i, d):
        if not _input(node, i):
            return None
        state = imp.value(node.input[i])  # [dirs, batch, hidden], layout 1 [batch, dirs, hidden]
        s = imp.slice(f"{name}_init{i}_d{d}", state, starts=[d], ends=[d + 1],
                      axes=[layout], steps=[1])
        return imp.reshape(f"{name}_init{i}_d{d}_2d", s, [batch, hidden])

    ys, hs, cs = [], [], []
    for d in range(ndir):
        cell = _Cell(imp, node, d, hidden, a)
        g = _GATES[op] * hidden
        xw = imp.matmul(f"{cell.prefix}_xw", x, cell.w_t, cell.x_bias)  # [seq, batch, g]
        h, c = initial(5, d), initial(6, d) if op == "LSTM" else None
        reverse = direction == "reverse" or d == 1
        per_step = [None] * seq
        for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
            xt = imp.reshape(f"{cell.prefix}_t{t}_x", imp.slice(
                f"{cell.prefix}_t{t}_xs", xw, starts=[t], ends=[t + 1], axes=[0], steps=[1]),
                [batch, g])
            h, c = cell.step(t, xt, h, c)
            per_step[t] = h
        ys.append(per_step)
        hs.append(h)
        cs.append(c)

    def stacked(name, parts, shape, axis):
        """parts reshaped to `shape` and concatenated; the last op is `name`."""
        if len(parts) == 1:
            return imp.reshape(name, parts[0], shape)
        return imp.concat(name, [imp.reshape(f"{name}_{i}", v, shape)
                                 for i, v in enumerate(parts)], axis)

    results = [None, None, None]
    if node.output[0]:  # Y: [seq, dirs, batch, hidden], layout 1 [batch, seq, dirs, hidden]
        out = node.output[0]
        name = out if layout == 0 else f"{out}_seq_first"
        if ndir == 1:
            y = stacked(name, ys[0], [1, 1, batch, hidden], 0)
        else:
            y = imp.concat(name, [stacked(f"{out}_d{d}", ys[d], [1, 1, batch, hidden], 0)
                                  for d in range(ndir)], 1)
        results[0] = y if layout == 0 else imp.permute(out, y, [2, 0, 1, 3])
    for k, states in ((1, hs), (2, cs)):  # Y_h, Y_c: [dirs, batch, hidden]
        if len(node.output) > k and node.output[k]:
            out = node.output[k]
            state = stacked(out if layout == 0 else f"{out}_dir_first", states,
                            [1, batch, hidden], 0)
            results[k] = state if layout == 0 else imp.permute(out, state, [1, 0, 2])
    return results
