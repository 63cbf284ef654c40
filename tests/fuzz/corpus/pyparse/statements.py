import numpy as np
def f(a, b=1, *args, c: int = 2, **kw) -> int:
    """doc"""
    x = a ^ b & c  # hi
    if x:
        return x
    elif y: pass
    else:
        print("s", x)
    with open(f) as fh, g():
        pass
    try:
        pass
    except E as e:
        raise
    for i, j in zip(a, b):
        y += i ** -j
    return [k for k in range(3) if k]

x = f'a{b!r:>{w}}c' "d" r'\n'
print >>sys.stderr, "x"
