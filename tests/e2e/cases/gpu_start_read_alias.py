# A clock read that becomes the next interval's start under another name
# (time_now = time.time(); ...; update_start = time_now) is a start read, no
# GPU603 whatever is queued before it; an end read after queued work is one.
import time

import cupy as cp

update_start = time.time()
for step in range(10):
    a = cp.ones(1000) * 2
    time_now = time.time()  # the next interval's start: fine
    print("update", time.time() - update_start)
    update_start = time_now
    b = cp.ones(1000) * 2
    t_end = time.time()  # expect: GPU603
    print(t_end - update_start)
    float(b)  # expect: GPU601
