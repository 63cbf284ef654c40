import numpy as np
f = lambda: np.zeros(1)
g = lambda *a, **k: 0
def h(*, a=np.ones(1), b: int = 2, **kw): pass
class C(np.ndarray, metaclass=M): pass
@np.vectorize
def v(x): return x
x.y.z()()()
(lambda: 0)()
