"""Errors raised by frontends: they name the model, node, op and reason."""


class FrontendError(ValueError):
    """The model cannot be imported; the message says where and why."""

    def __init__(self, reason: str, *, model: str = "", node: str = "",
                 op: str = ""):
        self.reason, self.model, self.node, self.op = reason, model, node, op
        where = []
        if model:
            where.append(model)
        if node or op:
            where.append(f"node '{node}' ({op})" if node else f"op {op}")
        super().__init__(": ".join(where + [reason]))
