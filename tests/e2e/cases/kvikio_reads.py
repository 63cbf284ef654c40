# Binary reads into numpy.frombuffer: from a file (open().read(), readinto) or
# the network (boto3, requests, fsspec, urllib) -> KvikIO (GPU108); bytes from
# elsewhere are an ordinary CuPy port.
import numpy as np
import boto3
import requests
import fsspec
import urllib.request

with open("data.bin", "rb") as f:
    raw = f.read()
a = np.frombuffer(raw, dtype=np.float32)  # expect: GPU108/kvikio
b = np.frombuffer(open("x.bin", "rb").read(), dtype=np.uint8)  # expect: GPU108/kvikio
buf = bytearray(1024)
with open("y.bin", "rb") as g:
    g.readinto(buf)
c = np.frombuffer(buf, dtype=np.uint8)  # expect: GPU108/kvikio
s3 = boto3.client("s3")
body = s3.get_object(Bucket="b", Key="k")["Body"].read()
d = np.frombuffer(body, dtype=np.float64)  # expect: GPU108/kvikio
e = np.frombuffer(requests.get("https://x/y.bin").content, dtype=np.float32)  # expect: GPU108/kvikio
with fsspec.open("s3://b/k") as h:
    g2 = np.frombuffer(h.read(), dtype=np.float32)  # expect: GPU108/kvikio
u = np.frombuffer(urllib.request.urlopen("https://x/z").read(), dtype=np.int16)  # expect: GPU108/kvikio
other = np.frombuffer(b"abc", dtype=np.uint8)  # expect: GPU101/cupy
