"""Instruction encoding and validation messages."""
import pytest

from tpuc import runtime as rt


def test_record_size():
    assert rt._rt.INSTRUCTION_BYTES == 272


def test_encode_decode_roundtrip(edge):
    o = rt.lmem_tensor(128, [1, 20, 3, 5], rt.DType.F16, start_lane=3)
    i = rt.make_conv(o, rt.lmem_tensor(0, [1, 20, 5, 7], rt.DType.F16),
                     rt.lmem_tensor(4096, [1, 20, 3, 3], rt.DType.F16), None,
                     pads=(1, 0, 1, 0), groups=20, relu=True)
    i.id, i.wait_id = 7, 3
    b = i.encode()
    assert len(b) == 272
    j = rt.Instruction.decode(b)
    assert j.encode() == b
    assert j.op == rt.Opcode.CONV and j.id == 7 and j.wait_id == 3
    assert j.dst.start_lane == 3 and list(j.dst.shape) == [1, 20, 3, 5]


def test_decode_rejects_garbage():
    b = bytearray(272)
    b[0] = 99
    with pytest.raises(rt.ChipError, match="invalid opcode 99"):
        rt.Instruction.decode(bytes(b))


def test_validation_message(edge):
    big = rt.lmem_tensor(65500, [1, 1, 1, 64], rt.DType.F32)
    i = rt.make_active(rt.ActOp.RELU, big, rt.lmem_tensor(0, [1, 1, 1, 64], rt.DType.F32))
    with pytest.raises(rt.ChipError) as e:
        i.validate(edge, 1 << 20)
    msg = str(e.value)
    assert "TIU instruction #0" in msg and "dst.addr" in msg and "exceeds lane size 0x10000" in msg


def test_tiu_operand_must_be_lmem(edge):
    i = rt.make_active(rt.ActOp.RELU, rt.ddr_tensor(0, [1, 1, 1, 4], rt.DType.F32),
                       rt.lmem_tensor(0, [1, 1, 1, 4], rt.DType.F32))
    with pytest.raises(rt.ChipError, match="TIU operands must be in LMEM"):
        i.validate(edge, 1 << 20)


@pytest.mark.parametrize("flags", [0x80, 0x01])
def test_flag_bits_foreign_to_the_opcode_are_rejected(edge, flags):
    """Right-transpose or bias bits on an activation mean nothing: an error, not ignored."""
    i = rt.make_active(rt.ActOp.RELU, rt.lmem_tensor(0, [1, 1, 1, 64], rt.DType.F32),
                       rt.lmem_tensor(256, [1, 1, 1, 64], rt.DType.F32))
    i.validate(edge, 1 << 20)
    i.flags = flags
    with pytest.raises(rt.ChipError, match=f"flags.*bits 0x{flags:x} have no meaning"):
        i.validate(edge, 1 << 20)
