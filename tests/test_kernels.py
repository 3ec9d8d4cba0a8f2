"""kernels.matvec: numpy on CPython; the wasm path is checked in Node by tests/bench/kernels_node.js.

A fake ``quire_kernels`` that reads and writes memory by address, as the wasm
kernel does, checks the addresses and sizes Python hands over.
"""

import ctypes

import numpy as np
import pytest

import quire.retrieval.kernels as kernels
from quire.retrieval.dense import DenseIndex

SHAPES = [(1, 1), (1, 5), (3, 7), (8, 4), (9, 5), (17, 768), (40, 1024), (100, 3)]


def floats_at(address, n):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(address))


class FakeKernels:
    """Does what kernels.js's matvec_f32 does, through ctypes instead of wasm."""

    simd = True

    def __init__(self):
        self.calls = 0

    def matvec_f32(self, mat_ptr, rows, dim, q_ptr, out_ptr):
        self.calls += 1
        floats_at(out_ptr, rows)[:] = floats_at(mat_ptr, rows * dim).reshape(rows, dim) @ floats_at(q_ptr, dim)


@pytest.fixture
def fake(monkeypatch):
    fake = FakeKernels()
    monkeypatch.setattr(kernels, "_kernels", fake)
    return fake


def random_case(rows, dim, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, dim)).astype(np.float32), rng.standard_normal(dim).astype(np.float32)


def test_backend_on_cpython_is_numpy():
    assert kernels.backend() == "numpy"


@pytest.mark.parametrize("rows,dim", SHAPES)
def test_numpy_path_matches_matmul(rows, dim):
    m, q = random_case(rows, dim)
    got = kernels.matvec(m, q)
    assert got.dtype == np.float32 and got.shape == (rows,)
    np.testing.assert_array_equal(got, m @ q)


@pytest.mark.parametrize("rows,dim", SHAPES)
def test_kernel_gets_addresses_and_sizes(fake, rows, dim):
    m, q = random_case(rows + 3, dim, seed=1)  # spare capacity, as DenseIndex keeps
    got = kernels.matvec(m[:rows], q)  # a leading-rows slice stays contiguous
    assert fake.calls == 1 and kernels.backend() == "wasm-simd"
    np.testing.assert_allclose(got, m[:rows] @ q, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda m, q: (m.astype(np.float64), q),  # dtype
        lambda m, q: (m, q.astype(np.float64)),
        lambda m, q: (np.asfortranarray(m), q),  # layout
        lambda m, q: (m[:, :-1], q[:-1]),
        lambda m, q: (m, np.repeat(q, 2)[::2]),
        lambda m, q: (m[:0], q),  # empty
    ],
    ids=["f64-matrix", "f64-query", "fortran", "column-slice", "strided-query", "no-rows"],
)
def test_arrays_the_kernel_cannot_take_go_to_numpy(fake, make):
    m, q = make(*random_case(6, 5))
    got = kernels.matvec(m, q)
    assert fake.calls == 0
    np.testing.assert_array_equal(got, m @ q)


def test_shape_mismatch_still_raises(fake):
    m, q = random_case(4, 5)
    with pytest.raises(ValueError):
        kernels.matvec(m, q[:4])
    assert fake.calls == 0


@pytest.mark.parametrize("use_fake", [False, True], ids=["numpy", "fake-kernel"])
@pytest.mark.parametrize("dim", [5, 7, 64])
def test_dense_scores_unchanged(monkeypatch, use_fake, dim):
    if use_fake:
        monkeypatch.setattr(kernels, "_kernels", FakeKernels())
    m, _ = random_case(37, dim, seed=2)
    index = DenseIndex()
    index.add(range(37), m)
    index.remove([3, 4])  # dead rows are still scored
    query = np.random.default_rng(3).standard_normal(dim)
    unit = (query / np.linalg.norm(query)).astype(np.float32)
    expected = (m / np.linalg.norm(m, axis=1, keepdims=True)) @ unit
    np.testing.assert_allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)
    expected[[3, 4]] = -np.inf
    assert [i for i, _ in index.search(query, k=3)] == np.argsort(-expected)[:3].tolist()
