import torch  # expect: GPU501/-
import jax.numpy as jnp  # expect: GPU502/-
import tensorflow as tf  # expect: GPU503/-
import cuspatial  # expect: GPU402/-
import cuxfilter  # expect: GPU401/-
import warp.sim  # expect: GPU403/newton
import geopandas as gpd  # expect: GPU112/cudf
import dask.dataframe as dd  # expect: GPU111/dask
from numba import njit, cuda


@njit  # expect: GPU110/numba-cuda-mlir
def step(a):
    return a * 2


@cuda.jit  # expect: GPU504/numba-cuda
def kernel(a):
    pass


x = torch.zeros(3)
builder = warp.sim.ModelBuilder()  # expect: GPU403/newton
