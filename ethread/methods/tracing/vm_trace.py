"""Parity's ``vmTrace`` as reth answers it (revm-inspectors' parity builder): for each frame,
its code account's code after the transaction (a create's: the code it deployed) and one
entry per step, with the frame the step opened (``sub``). Per step, as reth's
``make_instruction``:

- ``pc``, ``op`` and ``cost``: the gas the step took, a callee's gas included (geth's cost
  leaves a create's handed-on gas out: it is added back here);
- ``ex.used``: the gas left *before* the step;
- ``ex.push``: the stack items the step leaves (read from the stack the frame's next step
  finds; none for the frame's last step);
- ``ex.mem``: the memory before the step, whole; ``ex.store``: an SSTORE's slot and new
  value, a cold SLOAD's slot and value (revm journals no warm load).

A transaction whose only step is a STOP, or with no steps, has no ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...evm.hooks import _STACK_EFFECTS as STACK_EFFECTS
from ...evm.hooks import CREATE, CREATE2, NESTING_OPCODES, SELFDESTRUCT, SLOAD, SSTORE, Step, Tracer, TxEnv, opcode_name

STOP = 0x00


@dataclass(slots=True)
class VmOp:
    """One step of a frame's vmTrace."""

    pc: int
    op: str
    cost: int
    used: int
    push: tuple[int, ...] = ()
    memory: bytes | None = None
    store: tuple[int, int] | None = None
    sub: VmTrace | None = None


@dataclass(slots=True)
class VmTrace:
    """A frame's code and steps."""

    code: bytes = b""
    ops: list[VmOp] = field(default_factory=list)


@dataclass(slots=True)
class _Frame:
    trace: VmTrace
    address: bytes
    """The account whose code the frame runs (its code is read once the transaction ends)."""
    pending: tuple[VmOp, int, int | None] | None = None
    """The last step, its opcode and (a cold SLOAD's) slot, its pushed items still to read."""
    cold_slot: int | None = None
    """The slot the step about to run loads, when it is cold."""


class VmTracer(Tracer):
    """Collects the steps and frames of one transaction into a :class:`VmTrace`."""

    wants_steps = True
    wants_stack = True
    wants_memory = True

    def __init__(self) -> None:
        self.frames: list[_Frame] = []
        self.all_frames: list[_Frame] = []
        self.top: VmTrace | None = None
        self.env: TxEnv | None = None
        self.last_op = -1

    def on_tx_start(self, env: TxEnv) -> None:
        """Keep the state, to read the code and whether a slot is warm."""
        self.env = env

    def on_enter(self, depth: int, kind: int, sender: bytes, to: bytes, data: bytes, gas: int,
                 value: int | None) -> None:
        """A frame opens (not a self-destruct's): the sub of its parent's last step."""
        if kind == SELFDESTRUCT:
            return
        trace = VmTrace()
        frame = _Frame(trace, to)
        if self.frames:
            parent = self.frames[-1]
            if parent.trace.ops and parent.pending is not None:
                op, code, _ = parent.pending
                if code in NESTING_OPCODES and op.sub is None:
                    op.sub = trace
                    if code in (CREATE, CREATE2):
                        op.cost += gas
        else:
            self.top = trace
        self.frames.append(frame)
        self.all_frames.append(frame)

    def on_exit(self, depth: int, output: bytes, gas_used: int, error: str | None,
                reverted: bool) -> None:
        """A frame closes (its last step pushes nothing)."""
        if not self.frames or (depth > 0 and len(self.frames) == 1):
            return
        frame = self.frames.pop()
        frame.pending = None

    def on_opcode_start(self, step: Step) -> None:
        """Before an SLOAD runs: whether its slot is cold."""
        if step.op == SLOAD and self.frames and self.env is not None and step.stack:
            warm = getattr(self.env.state, "is_storage_warm", None)
            slot = step.stack[-1]
            if warm is not None and not warm(step.address, slot):
                self.frames[-1].cold_slot = slot

    def on_opcode(self, step: Step) -> None:
        """A step of the innermost frame; the frame's step before it gets what it pushed."""
        if not self.frames:
            return
        frame = self.frames[-1]
        stack = step.stack or []
        if frame.pending is not None:
            self._pushed(frame, stack)
        memory = step.memory if step.memory is not None else b""
        op = VmOp(step.pc, opcode_name(step.op), step.cost, step.gas, memory=memory)
        if step.op == SSTORE and len(stack) >= 2 and step.error is None:
            op.store = (stack[-1], stack[-2])
        frame.trace.ops.append(op)
        frame.pending = (op, step.op, frame.cold_slot if step.op == SLOAD else None)
        frame.cold_slot = None
        self.last_op = step.op

    def _pushed(self, frame: _Frame, stack: list[int]) -> None:
        assert frame.pending is not None
        op, code, cold_slot = frame.pending
        outputs = STACK_EFFECTS[code][1]
        if outputs and len(stack) >= outputs:
            op.push = tuple(stack[len(stack) - outputs:])
        if cold_slot is not None and stack:
            op.store = (cold_slot, stack[-1])
        frame.pending = None

    def on_tx_end(self, gas_used: int, error: str | None) -> None:
        """Read each frame's code as the transaction left it."""
        env = self.env
        if env is None:
            return
        for frame in self.all_frames:
            frame.trace.code = env.code(frame.address)

    def result_trace(self) -> VmTrace:
        """The top frame's trace (no ops when its only step is a STOP, as reth drops it)."""
        top = self.top or VmTrace()
        if len(top.ops) == 1 and top.ops[0].op == "STOP" and self.last_op == STOP:
            top.ops = []
        return top

